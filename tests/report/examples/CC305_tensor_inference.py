"""CC305: a tensor in a Python condition is found whatever made it: a torch operator (`torch.rand`), a layer's output,
a tensor method, an index, arithmetic or a comparison on one, a local that holds one, a helper annotated to return one.
Metadata (`x.shape`, `x.dim()`, `x.dtype`, `x.requires_grad`) and `is` tests are plain Python."""
import torch
from torch import nn


def score(x: torch.Tensor) -> torch.Tensor:
    return x.abs().mean()


class Augment(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.p = 0.5
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask=None):
        if torch.rand(1) < self.p:  # expect: CC305
            x = x.flip(-1)
        h = self.proj(x)
        if h[0, 0] > 0:  # expect: CC305
            h = -h
        q, k = h.chunk(2, dim=-1)
        while (q - k).norm() > 10.0:  # expect: CC305
            q = q / 2
        if score(h) > 1.0:  # expect: CC305
            h = h / 2
        if x.shape[-1] > 4 and x.dim() == 2 and x.dtype == torch.float32 and not x.requires_grad:
            h = h + 1
        if mask is not None:
            h = h * mask
        return h + q.sum() + k.sum()


def build() -> nn.Module:
    return Augment()
