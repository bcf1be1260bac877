"""CC309: per-layer compile of 10 layers that each read their own Python layer index."""
import torch
from torch import nn

REGION = "layers.*"


class Layer(nn.Module):
    def __init__(self, idx: int) -> None:
        super().__init__()
        self.layer_idx = idx
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x) * (self.layer_idx + 1)  # expect: CC309


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer(i) for i in range(10))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(x)


def build() -> nn.Module:
    return Stack()
