"""CC305: a tensor's value read into Python outside any condition (`.tolist()` for MoE routing, `.item()` for a
slice bound, `int(...)` of a reduction for a buffer size) still breaks the graph. `int()` of a shape is not a
tensor value."""
import torch
from torch import nn


class Router(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))

    def forward(self, x):
        choice = self.gate(x).argmax(-1)
        counts = nn.functional.one_hot(choice, 4).sum(0).tolist()  # expect: CC305
        keep = (x[:, 0] > 0).sum().item()  # expect: CC305
        capacity = int(nn.functional.one_hot(choice, 4).sum(0).max())  # expect: CC305
        rows = int(x.shape[0])
        out = torch.zeros_like(x)
        for expert, n in zip(self.experts, counts):
            out = out + expert(x) * n
        return out[: keep + 1] + x.new_zeros(capacity, 8).sum() + rows


def build() -> nn.Module:
    return Router()
