"""Hazard: bitsandbytes `Linear8bitLt` with the default LLM.int8() outlier threshold (6.0): the vector-wise quantiser asks `if outliers.any():` on the activation and then branches on `outlier_cols.numel()`, data-dependent Python control flow that breaks the compiled graph on every layer call. bitsandbytes made int8 modules compile without breaks only with threshold=0. From bitsandbytes-foundation/bitsandbytes#1581."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import MatmulLtState, matmul_8bit

LABEL = "item-branch"
SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1581"
OBSERVED = {"compiles_over_8_steps": 14, "graph_breaks": 6}

THRESHOLD = 6.0


class Linear8bitLt(nn.Module):
    def __init__(self, in_features: int, out_features: int, threshold: float = 0.0) -> None:
        super().__init__()
        weight = torch.randn(out_features, in_features)
        scb = weight.abs().amax(dim=1)
        self.register_buffer("CB", torch.round(weight * (127.0 / scb[:, None])).to(torch.int8))
        self.register_buffer("SCB", scb)
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.state = MatmulLtState(threshold=threshold, has_fp16_weights=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.state.CB, self.state.SCB = self.CB, self.SCB
        return matmul_8bit(x, self.state, bias=self.bias)


class QuantizedMLP(nn.Module):
    def __init__(self, threshold: float = THRESHOLD) -> None:
        super().__init__()
        self.fc1 = Linear8bitLt(8, 8, threshold=threshold)
        self.fc2 = Linear8bitLt(8, 8, threshold=threshold)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    return QuantizedMLP()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8) * (4.0 if i % 2 else 1.0)  # some batches carry outlier features
    with torch.no_grad():
        model(x)
