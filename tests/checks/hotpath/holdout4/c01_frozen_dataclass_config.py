"""Clean: the block reads a frozen `@dataclass` config (flag, float scale, head count) in forward; the values are guarded but never change, so it compiles once, as discussed in pytorch/pytorch#138226 (No guards for frozen dataclasses and readonly configs)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/138226"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


@dataclass(frozen=True)
class BlockConfig:
    hidden_size: int = 8
    num_heads: int = 2
    residual_scale: float = 0.5
    use_residual_scale: bool = True


class Block(nn.Module):
    def __init__(self, config: BlockConfig) -> None:
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x).view(x.shape[0], self.config.num_heads, -1).softmax(-1).flatten(1)
        if self.config.use_residual_scale:
            h = h * self.config.residual_scale
        return x + h


def build() -> nn.Module:
    return Block(BlockConfig())


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
