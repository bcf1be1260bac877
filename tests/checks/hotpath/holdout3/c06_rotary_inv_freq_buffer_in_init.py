"""Clean: the rotary embedding as fixed in huggingface/transformers#30775 — `inv_freq` is computed in `__init__` and registered as a non-persistent buffer, and positions arrive as a tensor, so the forward only reads tensors and compiles once across decoding steps."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/30775"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GemmaRotaryEmbedding(nn.Module):
    def __init__(self, dim: int, max_position_embeddings: int = 2048, base: float = 10000.0) -> None:
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).float() / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class Attention(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(hidden, hidden)
        self.rotary_emb = GemmaRotaryEmbedding(hidden)

    def forward(self, hidden_states: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden_states)
        cos, sin = self.rotary_emb(q, position_ids)
        q1, q2 = q.chunk(2, dim=-1)
        return q * cos + torch.cat((-q2, q1), dim=-1) * sin


def build() -> nn.Module:
    return Attention()


def step(model: nn.Module, i: int) -> None:
    # one decoding step per call: the position moves, the shapes do not
    with torch.no_grad():
        model(torch.randn(1, 1, 8), torch.tensor([[4 + i]]))
