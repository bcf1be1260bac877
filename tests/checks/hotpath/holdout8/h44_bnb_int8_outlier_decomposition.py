"""Hazard: LLM.int8() with `threshold > 0` finds outlier feature columns of the activations with a data-dependent `nonzero` and branches on `outlier_cols.numel()` inside the matmul, so Dynamo breaks the graph at the outlier test and the `nonzero`-style lookup in every layer, and the resumed frames recompile as the outlier columns move between batches. From bitsandbytes-foundation/bitsandbytes#1594 (graph breaks during the int8 problem decomposition)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1594"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 6}


class MatmulLtState:
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.CB: torch.Tensor | None = None
        self.SCB: torch.Tensor | None = None
        self.idx: torch.Tensor | None = None


def int8_vectorwise_quant(A: torch.Tensor, threshold: float = 0.0):
    outlier_cols = None
    if threshold > 0.0:
        outliers = A.abs() >= threshold
        if outliers.any():
            outlier_cols = torch.argwhere(outliers.any(dim=0)).view(-1)
    row_stats = A.abs().amax(dim=1).clamp(min=1e-6)
    CA = torch.round(A / row_stats[:, None] * 127)
    return CA, row_stats, outlier_cols


def matmul_8bit(A: torch.Tensor, state: MatmulLtState, bias: torch.Tensor | None) -> torch.Tensor:
    CA, SCA, outlier_cols = int8_vectorwise_quant(A, threshold=state.threshold)
    subA = None
    # Handle sparse decomposition. In some instances, we may have not found any outlier columns at all.
    if state.threshold > 0.0 and outlier_cols is not None and outlier_cols.numel():
        state.idx = outlier_cols
        subA = A[:, outlier_cols]
        CA[:, outlier_cols] = 0
    out = (CA * SCA[:, None] / 127) @ (state.CB * state.SCB[:, None] / 127).t()
    if subA is not None:
        W = state.CB * state.SCB[:, None] / 127
        out = out + subA @ W[:, state.idx].t()
    return out + bias if bias is not None else out


class Linear8bitLt(nn.Linear):
    def __init__(self, in_features: int, out_features: int, threshold: float = 6.0) -> None:
        super().__init__(in_features, out_features)
        self.state = MatmulLtState(threshold)
        with torch.no_grad():
            scb = self.weight.abs().amax(dim=1).clamp(min=1e-6)
            self.state.CB = torch.round(self.weight / scb[:, None] * 127)
            self.state.SCB = scb

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return matmul_8bit(x, self.state, self.bias)


class Int8Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = Linear8bitLt(8, 8)
        self.o_proj = Linear8bitLt(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.o_proj(torch.relu(self.q_proj(x)))


def build() -> nn.Module:
    return Int8Block().eval()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    x[:, i % 8] += 10.0  # LLM activations carry a few large-magnitude feature columns
    with torch.no_grad():
        model(x)
