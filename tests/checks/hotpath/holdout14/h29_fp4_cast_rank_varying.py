"""Hazard: the FP4 rounding helper is compiled on its own (`cast_to_fp4` under torch.compile) and the MoE layer sends it tensors of different rank (dense weight, group-scaled and per-expert tensors); Dynamo guards on the input rank and has no automatic dynamic rank, so every new rank compiles another graph (a recompile storm that hits the limit in generation). From vllm-project/compressed-tensors#741 (fix cast_to_fp4 per-rank torch.compile recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/vllm-project/compressed-tensors/pull/741"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
REGION = "fp4"

_FP4_VALUES = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


class FP4CastToE2M1(nn.Module):
    """FP4_E2M1_DATA.cast_to_fp4: round to the nearest representable e2m1 magnitude, keep the sign."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sign = torch.sign(x)
        x = torch.abs(x).clamp(max=6.0)
        idx = torch.argmin(torch.abs(x.unsqueeze(-1) - _FP4_VALUES), dim=-1)
        return sign * _FP4_VALUES[idx]


class NVFP4MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 1, group_size: int = 4) -> None:
        super().__init__()
        self.fp4 = FP4CastToE2M1()
        self.gate = nn.Linear(dim, num_experts)
        self.dense = nn.Parameter(torch.randn(dim, dim))
        self.experts = nn.Parameter(torch.randn(num_experts, dim, dim))
        self.group_size = group_size

    def qdq(self, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.fp4(w / scale) * scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dense = self.qdq(self.dense, self.dense.abs().amax() / 6.0)  # rank 2
        grouped = self.dense.view(self.dense.shape[0], -1, self.group_size)
        grouped = self.qdq(grouped, grouped.abs().amax(-1, keepdim=True) / 6.0).view_as(self.dense)  # rank 3
        experts = self.qdq(self.experts.unsqueeze(1), self.experts.abs().amax() / 6.0).squeeze(1)  # rank 4, per expert
        weights = torch.softmax(self.gate(x), dim=-1)
        out = x @ dense.t() + x @ grouped.t()
        return out + torch.einsum("be,eoi,bi->bo", weights, experts, x)


def build() -> nn.Module:
    return NVFP4MoE()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
