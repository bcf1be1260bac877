"""Hazard: DeepSpeed's activation-checkpointing `checkpoint()` writes module globals on every call (`mp_rank`/`mp_size` on the first call, `cuda_device`, a running `num_layers`) from inside the compiled transformer, so each step finds different global values under its guards and recompiles until the limit. From deepspeedai/DeepSpeed#6541 (reduce setting global variables to reduce torch compile graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11 import _helpers_c as checkpointing

LABEL = "helper-module"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/6541"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class ParallelTransformerLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 2 * hidden)
        self.fc2 = nn.Linear(2 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln(x))))


class GPTModelPipe(nn.Module):
    def __init__(self, layers: int = 2, hidden: int = 8) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ParallelTransformerLayer(hidden) for _ in range(layers))
        self.head = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = checkpointing.checkpoint(layer, x)
        return self.head(x)


def build() -> nn.Module:
    checkpointing.mp_rank = checkpointing.mp_size = checkpointing.num_layers = None
    return GPTModelPipe()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
