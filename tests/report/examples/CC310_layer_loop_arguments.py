"""CC310: what a model's own eager loop passes its compiled layers (`layers.*`, each compiled on its own): a
`residual` that is None before the loop and reassigned in it reaches the first layer as None and the others as a
tensor (one graph each), and a list of region prompts whose count the step changes is a graph per length (Dynamo
guards a list's length). A fixed list and a tensor carried from the first layer on are not reported."""
import torch
from torch import nn

REGION = "layers.*"


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, residual, regions=()):
        x = x if residual is None else x + residual
        for r in regions:
            x = x + r
        return self.proj(x), x


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))

    def encode(self, x, regions):
        residual = None
        for layer in self.layers:
            x, residual = layer(x, residual, regions)  # expect: CC310 warning (None at the first layer only; the
            # list of regions changes length)
        return x

    def encode_fixed(self, x, regions):
        residual = torch.zeros_like(x)
        for layer in self.layers:
            x, residual = layer(x, residual, regions)
        return x


def build() -> nn.Module:
    return Model()


def step(model, i):
    with torch.no_grad():
        model.encode(torch.randn(2, 8), [torch.randn(2, 8) for _ in range(1 + i % 3)])
        model.encode_fixed(torch.randn(2, 8), [torch.randn(2, 8) for _ in range(2)])
