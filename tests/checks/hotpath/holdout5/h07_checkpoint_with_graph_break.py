"""Hazard: a decoder layer is wrapped in torch.utils.checkpoint and its body calls a Python-side bookkeeping hook Dynamo cannot trace (here `time.perf_counter`, standing for the ZeRO-3 parameter hooks of the report); a graph break inside a checkpointed function breaks the graph in each layer and, because the layers are called in a loop, Dynamo skips the whole decoder frame (eager fallback). From pytorch/pytorch#135816 (remove @torch._dynamo_disable from checkpoint: all decoder layers fall back to eager)."""
from __future__ import annotations

import time

import torch
import torch.utils.checkpoint
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/135816"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 2}

_FETCH_LOG: list[float] = []


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        _FETCH_LOG.append(time.perf_counter())  # parameter-fetch bookkeeping
        x = x + self.attn(x)
        return x + self.mlp(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.utils.checkpoint.checkpoint(self._forward, x, use_reentrant=False)


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(2)])
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def build() -> nn.Module:
    return Decoder()


def step(model: nn.Module, i: int) -> None:
    model.zero_grad(set_to_none=True)
    loss = model(torch.randn(4, 8, requires_grad=True)).pow(2).mean()
    loss.backward()
