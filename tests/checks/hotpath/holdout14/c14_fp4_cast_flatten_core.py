"""Clean: the FP4 rounding keeps an eager wrapper that flattens every tensor before calling the compiled core (`_cast_to_fp4`), so the compiled region only ever sees rank-1 input of the same length, whatever the rank of the dense, group-scaled or per-expert tensor, and compiles once. From vllm-project/compressed-tensors#741 (split cast_to_fp4 into an eager wrapper plus a compiled core that only sees rank-1)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/compressed-tensors/pull/741"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "fp4.core"

_FP4_VALUES = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


class _CastToFP4Core(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sign = torch.sign(x)
        x = torch.abs(x).clamp(max=6.0)
        idx = torch.argmin(torch.abs(x.unsqueeze(-1) - _FP4_VALUES), dim=-1)
        return sign * _FP4_VALUES[idx]


class FP4CastToE2M1(nn.Module):
    """Eager wrapper: flatten (not reshape(-1)), cast in the compiled core, restore the shape."""

    def __init__(self) -> None:
        super().__init__()
        self.core = _CastToFP4Core()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.core(x.flatten()).view(x.shape)


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
