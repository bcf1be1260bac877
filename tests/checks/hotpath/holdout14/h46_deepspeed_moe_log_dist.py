"""Hazard: a DeepSpeed-MoE style top-k gate reports its capacity through `log_dist(..., ranks=[0], level=DEBUG)` from the library's logging utilities inside the compiled forward; Dynamo cannot trace `logging.Logger` methods (even when the level filters the record out), so every call graph-breaks around the logging call. From deepspeedai/DeepSpeed#6999 (config torch to avoid graph breaks caused by logger)."""
from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import log_dist

LABEL = "graph-break"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/6999"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class TopKGate(nn.Module):
    def __init__(self, model_dim: int = 8, num_experts: int = 4, k: int = 1, capacity_factor: float = 1.0) -> None:
        super().__init__()
        self.wg = nn.Linear(model_dim, num_experts, bias=False)
        self.k = k
        self.num_experts = num_experts
        self.capacity_factor = capacity_factor

    def forward(self, x: torch.Tensor):
        logits = self.wg(x)
        gates = F.softmax(logits, dim=1)
        capacity = int(self.capacity_factor * x.shape[0] / self.num_experts)
        log_dist(f"top{self.k} gating: tokens={x.shape[0]} capacity={capacity}", ranks=[0], level=logging.DEBUG)
        indices = torch.argmax(gates, dim=1)
        mask = F.one_hot(indices, num_classes=self.num_experts).to(gates.dtype)
        l_aux = torch.mean(gates.mean(0) * mask.mean(0)) * self.num_experts
        return l_aux, gates * mask


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4) -> None:
        super().__init__()
        self.gate = TopKGate(dim, num_experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(num_experts)])

    def forward(self, x: torch.Tensor):
        l_aux, combine = self.gate(x)
        out = sum(combine[:, e : e + 1] * expert(x) for e, expert in enumerate(self.experts))
        return out, l_aux


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    out, l_aux = model(torch.randn(16, 8))
    (out.pow(2).mean() + 0.01 * l_aux).backward()
