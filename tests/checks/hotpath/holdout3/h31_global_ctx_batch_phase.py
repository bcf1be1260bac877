"""Hazard: the embedding and head read the scheduler's batch through a process-global context (`get_global_ctx().batch`) and branch on its `phase` string and Python `size`, so every new batch the engine installs fails a guard and the compiled model recompiles. From sgl-project/mini-sglang#60 (global-context pattern and phase-based control flow cause guard failures and recompilations)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/sgl-project/mini-sglang/issues/60"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 0}


@dataclass
class Batch:
    phase: str  # "prefill" | "decode"
    size: int


@dataclass
class Context:
    batch: Batch | None = None


_GLOBAL_CTX = Context()


def get_global_ctx() -> Context:
    return _GLOBAL_CTX


class VocabEmbedding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(32, 8))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        batch = get_global_ctx().batch
        x = nn.functional.embedding(ids, self.weight)
        if batch.phase == "prefill":
            return x
        return x[: batch.size]


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = VocabEmbedding()
        self.lm_head = nn.Linear(8, 32)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.embed(ids))


def build() -> nn.Module:
    return TinyLM()


def step(model: nn.Module, i: int) -> None:
    # the engine's loop: one prefill, then decode batches whose running size changes as requests finish or join
    batch = Batch("prefill", 8) if i == 0 else Batch("decode", 8 - (i % 4))
    get_global_ctx().batch = batch
    with torch.no_grad():
        model(torch.randint(0, 32, (8,)))
