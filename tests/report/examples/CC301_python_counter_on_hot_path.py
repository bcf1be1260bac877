"""CC301: a Python int counter updated in a compiled forward (the MoE router incident)."""
import torch
from torch import nn


class Router(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.batches = 0
        self.register_buffer("seen", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x):
        self.batches += 1  # expect: CC301
        with torch.no_grad():
            self.seen.add_(1)
        return self.gate(x).argmax(-1)


def build() -> nn.Module:
    return Router()
