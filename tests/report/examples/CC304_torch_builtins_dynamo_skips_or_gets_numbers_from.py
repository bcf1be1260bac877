"""CC304: C functions of torch's namespace that break the graph, read from Dynamo's own tables: one its trace rules
mark as skipped (`torch._nested_tensor_from_mask`, BetterTransformer's fast path: "Attempted to call function marked
as skipped"), and ATen operators every overload of which returns a Python bool or int (`torch.equal`, a left-aligned
mask check, `torch.result_type`: "torch.* op returned non-Tensor" or a data-dependent operator). Operators that
return tensors (`torch.where`, `torch.cat`) and those Dynamo answers itself (`torch.is_floating_point`, `torch.numel`)
do not break."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.reference = torch.zeros(8)

    def forward(self, x, mask):
        h = self.proj(x)
        if torch._nested_tensor_from_mask_left_aligned(h, mask):  # expect: CC304
            h = torch._nested_tensor_from_mask(h, mask).to_padded_tensor(0.0)  # expect: CC304
        if torch.equal(self.reference, h[0, 0]):  # expect: CC304
            h = h * 2
        dtype = torch.result_type(h, 1.0)  # expect: CC304
        if torch.is_floating_point(h) and torch.numel(h) > 0:
            h = torch.where(mask.unsqueeze(-1), h, torch.cat([h[:, :0], torch.zeros_like(h)], dim=1))
        return h.to(dtype)


def build() -> nn.Module:
    return Encoder()


def step(model, i):
    mask = torch.ones(2, 4, dtype=torch.bool)
    with torch.no_grad():
        model(torch.randn(2, 4, 8), mask)
