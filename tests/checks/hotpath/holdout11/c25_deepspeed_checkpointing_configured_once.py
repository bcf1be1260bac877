"""Clean: the fixed DeepSpeed checkpointing flow: `configure_checkpointing()` sets the rank/size/layer-count globals once before training, and the hot-path `checkpoint_configured()` only reads them, so the compiled transformer keeps one graph. Look-alike of h48, from deepspeedai/DeepSpeed#6541."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11 import _helpers_c as checkpointing

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/6541"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
            x = checkpointing.checkpoint_configured(layer, x)
        return self.head(x)


def build() -> nn.Module:
    model = GPTModelPipe()
    checkpointing.configure_checkpointing(num_checkpoints=len(model.layers))
    return model


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
