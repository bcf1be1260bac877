"""Clean: the look-alike the report contrasts with — the `with_kwargs=True` pre-hook is registered once, at setup, on the compiled block itself, and only fills a list the loop drains, so the block compiles once. From pytorch/pytorch#170110 ("registering the hook on the compiled module itself does NOT cause recompilation")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/170110"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = nn.Linear(8, 8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(x)
        return x + self.mlp(x)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))
        self.captured: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


REGION = "layers.0"
FRAMES = 2  # the pre-hook runs as its own compiled frame ahead of Block.forward


def build() -> nn.Module:
    model = Model()

    def capture(module, args, kwargs):
        model.captured.append(args[0].detach())
        return None

    model.layers[0].register_forward_pre_hook(capture, with_kwargs=True)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))
    model.captured.clear()
