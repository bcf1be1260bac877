"""Hazard: the trainer sets the intra-op thread count at the start of every stage (fit, validate) to different values, and the compiled layer guards on that global state, so each switch compiles a fresh graph. From ecmwf/anemoi-core#1344: fix compile error when using activation checkpointing (the CPU thread count was reset several times by PyTorch Lightning at runtime, each reset triggering a needless recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/ecmwf/anemoi-core/pull/1344"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class ConditionalLayerNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8, elementwise_affine=False)
        self.scale = nn.Linear(4, 8)
        self.shift = nn.Linear(4, 8)

    def forward(self, x: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.norm(x) * (1 + self.scale(cond)) + self.shift(cond)


class Stage:
    """What the trainer does on entering a stage: pin the intra-op threads for that stage."""

    THREADS = {"fit": 2, "validate": 1}

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> "Stage":
        self._previous = torch.get_num_threads()
        torch.set_num_threads(self.THREADS[self.name])
        return self

    def __exit__(self, *exc) -> None:
        torch.set_num_threads(self._previous)


def build() -> nn.Module:
    return ConditionalLayerNorm()


def step(model: nn.Module, i: int) -> None:
    stage = "fit" if i % 4 < 3 else "validate"
    with Stage(stage), torch.no_grad():
        model(torch.randn(4, 8), torch.randn(4, 4))
