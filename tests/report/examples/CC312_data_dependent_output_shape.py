"""CC312: ops whose output shape depends on tensor values break the graph: `nonzero`, `unique`, `bincount`,
one-argument `torch.where`, and reading through a boolean tensor mask. Writing through a mask, `masked_fill` and
three-argument `torch.where` keep shapes static, and an op under a test the scan cannot decide (an auxiliary loss
behind `if output_router_logits:`) may never run: neither is reported."""
import torch
from torch import nn


class Filter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, ids, output_router_logits=False):
        y = self.proj(x)
        kept = y[y > 0]  # expect: CC312
        rows_kept = y[y.abs().sum(-1) > 1]  # expect: CC312
        finite = y[~torch.isnan(y)]  # expect: CC312
        hit = torch.nonzero(y.sum(-1) > 0)  # expect: CC312
        rows, cols = torch.where(y > 1)  # expect: CC312
        uniq = ids.unique()  # expect: CC312
        counts = torch.bincount(ids.flatten(), minlength=8)  # expect: CC312
        y[y < -1] = 0.0
        z = torch.where(y > 0, y, 0.0).masked_fill(y > 2, 2.0)
        if output_router_logits:
            z = z + torch.bincount(ids.flatten()).sum()
        return kept.sum() + rows_kept.sum() + finite.sum() + hit.numel() + rows.numel() + cols.numel() + uniq.sum() + counts.sum() + z.sum()


def build() -> nn.Module:
    return Filter()
