"""Clean: attention dispatch calls an `lru_cache`-wrapped `is_torch_version(">=", "2.5.0")` helper from another module in forward; Dynamo skips the cache wrapper and traces the pure function to a constant, so it compiles once with no break (only a warning), from huggingface/diffusers#13384 (Fix Dynamo lru_cache warnings during torch.compile)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_a

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/13384"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def dispatch_attention_fn(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    if _helpers_a.is_torch_version(">=", "2.5.0"):
        return F.scaled_dot_product_attention(query, key, value)
    scores = query @ key.transpose(-1, -2) / query.shape[-1] ** 0.5
    return scores.softmax(-1) @ value


class FluxAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_qkv = nn.Linear(8, 24)
        self.to_out = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_qkv(hidden_states).chunk(3, dim=-1)
        return self.to_out(dispatch_attention_fn(q, k, v))


def build() -> nn.Module:
    return FluxAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
