"""Clean: between calls the serving loop points `cur_buffer` at a different row of a preallocated KV buffer (`self.cur_buffer = self.test_buffer[idx : idx + 1]`) and forward copies into it; the report's wrong-result bug is fixed and torch 2.13 runs the same-shaped view through one graph (compiles once, writes land in the right row). From pytorch/pytorch#111785 (torch.compile precision bug when the attr object changes)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/111785"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ContextKV(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("test_buffer", torch.zeros((8, 6), dtype=torch.float32))
        self.cur_buffer = self.test_buffer
        self.proj = nn.Linear(6, 6)

    def select_context_kv(self, idx: int) -> None:
        self.cur_buffer = self.test_buffer[idx : idx + 1]

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        self.cur_buffer.copy_(self.proj(src))
        return self.cur_buffer


def build() -> nn.Module:
    model = ContextKV()
    model.select_context_kv(0)
    return model


def step(model: nn.Module, i: int) -> None:
    model.select_context_kv(i)
    with torch.no_grad():
        model(torch.ones(1, 6) + i)
