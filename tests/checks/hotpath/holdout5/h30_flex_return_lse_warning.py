"""Hazard: the attention layer asks a flex-attention-like library wrapper for the log-sum-exp with the deprecated `return_lse=True`, which calls warnings.warn inside the compiled region and breaks the graph on every call. From pytorch/torchtitan#2684 (Use return_aux in FlexAttention to avoid graph breaking warnings.warn)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2684"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class SinkAttention(nn.Module):
    """gpt-oss style attention: the sink logit is folded in through the returned lse."""

    def __init__(self) -> None:
        super().__init__()
        self.wqkv = nn.Linear(8, 24)
        self.wo = nn.Linear(8, 8)
        self.sinks = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        out, lse = _helpers_b.sdpa_with_lse(q, k, v, return_lse=True)
        out = out * torch.sigmoid(lse - self.sinks).unsqueeze(-1)
        return self.wo(out)


def build() -> nn.Module:
    return SinkAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
