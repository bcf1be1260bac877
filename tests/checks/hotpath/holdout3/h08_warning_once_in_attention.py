"""Hazard: the SDPA attention layer calls transformers' `logger.warning_once(...)` (an lru_cache-wrapped logger method) when asked for attention weights it cannot return; Dynamo cannot trace the wrapper and breaks the graph on every forward that takes that branch. From pytorch/pytorch#132635 (custom logger methods such as `warning_once` still graph-break even when `Logger.warning` is ignored)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/132635"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class SdpaAttention(nn.Module):
    def __init__(self, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states: torch.Tensor, output_attentions: bool = False) -> torch.Tensor:
        if output_attentions:
            _helpers_a.warning_once(
                "SdpaAttention does not support `output_attentions=True`; falling back to returning no weights."
            )
        b, t, c = hidden_states.shape
        q, k, v = self.qkv(hidden_states).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, c))


def build() -> nn.Module:
    return SdpaAttention()


def step(model: nn.Module, i: int) -> None:
    # the evaluation script asks for attention maps on every batch
    with torch.no_grad():
        model(torch.randn(2, 4, 8), output_attentions=True)
