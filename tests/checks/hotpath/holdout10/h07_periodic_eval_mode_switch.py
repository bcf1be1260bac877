"""Hazard: a timm-style train script compiles the model in place and runs a validation pass every few steps with
`model.eval()` / `model.train()`; the `training` flag of every submodule is guarded, so the first eval pass
recompiles the whole forward (dropout and stochastic depth take the other branch). From pytorch/pytorch#122414
(torch.compile should keep module.training in step with the compiled module)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/122414"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.1) -> None:
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = x.new_empty(shape).bernoulli_(keep)
        return x * mask / keep


class MlpBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(16, 8)
        self.drop_path = DropPath(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop_path(self.fc2(self.drop(torch.relu(self.fc1(self.norm(x))))))


class TinyVit(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(MlpBlock(), MlpBlock())
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x).mean(1))


def build() -> nn.Module:
    return TinyVit()


def validate(model: nn.Module) -> None:
    model.eval()
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
    model.train()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 4, 8)).sum().backward()
    if i % 4 == 3:  # --val-interval
        validate(model)
