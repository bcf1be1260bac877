"""Clean: the same Llama-style attention writing into an HF-style `StaticCache`, but the mask is derived from the
`cache_position` tensor passed in (how transformers fixed it after pytorch/pytorch#120248) and the compiled forward
never calls the cache's int-bumping `update()`: k/v are written with tensor ops into the preallocated buffers."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/120248"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LlamaSdpaAttention(nn.Module):
    def __init__(self, dim: int = 8, max_len: int = 32) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.register_buffer("key_cache", torch.zeros(1, max_len, dim), persistent=False)
        self.register_buffer("value_cache", torch.zeros(1, max_len, dim), persistent=False)
        self.register_buffer("causal_positions", torch.arange(max_len), persistent=False)

    def forward(self, hidden_states: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden_states)
        self.key_cache.index_copy_(1, cache_position, self.k_proj(hidden_states))
        self.value_cache.index_copy_(1, cache_position, self.v_proj(hidden_states))
        mask = self.causal_positions <= cache_position[-1]
        scores = (q @ self.key_cache.transpose(1, 2)).masked_fill(~mask, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ self.value_cache)


def build() -> nn.Module:
    return LlamaSdpaAttention()


def step(model: nn.Module, i: int) -> None:
    cache_position = torch.tensor([i])
    with torch.no_grad():
        model(torch.randn(1, 1, 8), cache_position)
