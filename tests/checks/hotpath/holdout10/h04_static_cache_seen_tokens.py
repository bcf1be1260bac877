"""Hazard: a Llama-style decoder layer writes into an HF-style `StaticCache` held on the model; the cache's
`update()` also bumps the Python int `seen_tokens` that the compiled forward then reads for the mask, so every decode
step recompiles. From pytorch/pytorch#120248 (stateful int is not updated
when using torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_a import StaticCache

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/120248"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class LlamaSdpaAttention(nn.Module):
    def __init__(self, dim: int = 8, max_len: int = 32) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.past_key_value = StaticCache(max_len, dim)
        self.register_buffer("causal_positions", torch.arange(max_len), persistent=False)

    def forward(self, hidden_states: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden_states)
        k, v = self.past_key_value.update(self.k_proj(hidden_states), self.v_proj(hidden_states), cache_position)
        seen = self.past_key_value.get_seq_length()
        mask = self.causal_positions < seen
        scores = (q @ k.transpose(1, 2)).masked_fill(~mask, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ v)


def build() -> nn.Module:
    return LlamaSdpaAttention()


def step(model: nn.Module, i: int) -> None:
    cache_position = torch.tensor([i])  # one new token per decode step
    with torch.no_grad():
        model(torch.randn(1, 1, 8), cache_position)
