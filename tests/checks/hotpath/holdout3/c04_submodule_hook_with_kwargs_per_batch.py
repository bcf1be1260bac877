"""Clean: an activation-capture utility registers a `with_kwargs=True` forward pre-hook on a submodule of the compiled block for each batch and removes it afterwards — the report's recompile-per-batch pattern, which torch 2.13 no longer shows (the block compiles once, no break). From pytorch/pytorch#170110 (Submodule forward hook with kwargs cause recompilation, closed)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/170110"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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


def step(model: nn.Module, i: int) -> None:
    def capture(module, args, kwargs):
        model.captured.append(args[0].detach())
        return None

    handle = model.layers[0].self_attn.register_forward_pre_hook(capture, with_kwargs=True)
    try:
        with torch.no_grad():
            model(torch.randn(2, 8))
    finally:
        handle.remove()
        model.captured.clear()


def build() -> nn.Module:
    return Model()
