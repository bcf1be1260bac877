"""Hazard: a weightless RMSNorm is compiled on its own while the training loop interleaves a `torch.no_grad()` validation pass with the training steps; the grad-mode global-state guard and the input's requires_grad both differ between the two kinds of call, so the norm compiles a second time as soon as validation starts (and again for any other combination the loop reaches). From pytorch/pytorch#144068 (redundant recompilation: torch.no_grad() context and requires_grad trigger recompiles of a compiled rmsnorm)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/144068"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "**.norm"


class RMSNormWithoutWeight(nn.Module):
    def __init__(self, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        return hidden_states.to(torch.float32)


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = RMSNormWithoutWeight()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.norm(self.proj(x))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    model.train()
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    if i % 2 == 1:  # validate every other step
        model.eval()
        with torch.no_grad():
            model(torch.randn(4, 8))
