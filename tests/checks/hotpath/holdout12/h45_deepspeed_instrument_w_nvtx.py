"""Hazard: DeepSpeed decorates hot functions with `instrument_w_nvtx`, which pushes and pops an accelerator profiler range around every call; the MoE gate's `top1gating` is decorated, so the compiled MoE layer breaks the graph on the range calls every forward. From deepspeedai/DeepSpeed#7081 (Avoid graph breaks by disabling sourceless calls in instrument_w_nvtx)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import instrument_w_nvtx

LABEL = "helper-module"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7081"
OBSERVED = {"compiles_over_8_steps": 12, "graph_breaks": 3}


@instrument_w_nvtx
def top1gating(logits: torch.Tensor, capacity_factor: float = 1.0):
    gates = F.softmax(logits, dim=1)
    indices1_s = torch.argmax(gates, dim=1)
    mask1 = F.one_hot(indices1_s, num_classes=logits.shape[1]).to(gates.dtype)
    gates1_s = (gates * mask1).sum(dim=1)
    return gates1_s, mask1


class TopKGate(nn.Module):
    def __init__(self, model_dim: int = 8, num_experts: int = 4) -> None:
        super().__init__()
        self.wg = nn.Linear(model_dim, num_experts, bias=False)

    def forward(self, x: torch.Tensor):
        return top1gating(self.wg(x))


class MOELayer(nn.Module):
    def __init__(self, model_dim: int = 8, num_experts: int = 4) -> None:
        super().__init__()
        self.gate = TopKGate(model_dim, num_experts)
        self.experts = nn.ModuleList(nn.Linear(model_dim, model_dim) for _ in range(num_experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gates, mask = self.gate(x)
        expert_out = torch.stack([e(x) for e in self.experts], dim=1)  # [tokens, experts, dim]
        return (expert_out * mask.unsqueeze(-1)).sum(dim=1) * gates.unsqueeze(-1)


def build() -> nn.Module:
    return MOELayer()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(6, 8)).sum().backward()
