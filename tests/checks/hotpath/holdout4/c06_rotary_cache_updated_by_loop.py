"""Clean: the generation loop calls `model.update_cacheable_data(input_ids)` before each forward, which refills the rotary cos/sin buffers in place outside the compiled region, and forward only slices them; this is the fix of foundation-model-stack/foundation-model-stack#64 (Graph break fixes: recomputing cached rotary data in forward caused a cascade of graph breaks)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/foundation-model-stack/foundation-model-stack/pull/64"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int = 8, max_seq_len: int = 32, ratio: float = 10000.0) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / ratio ** (torch.arange(0, dim, 2).float() / dim), persistent=False)
        self.register_buffer("cos_cached", torch.zeros(max_seq_len, dim), persistent=False)
        self.register_buffer("sin_cached", torch.zeros(max_seq_len, dim), persistent=False)

    @torch.no_grad()
    def compute_freqs_cis(self, seq_len: int) -> None:
        t = torch.arange(seq_len, dtype=torch.float32)
        emb = torch.outer(t, self.inv_freq).repeat_interleave(2, dim=-1)
        self.cos_cached[:seq_len].copy_(emb.cos())
        self.sin_cached[:seq_len].copy_(emb.sin())

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        seq_len = q.shape[1]
        return q * self.cos_cached[:seq_len] + q.flip(-1) * self.sin_cached[:seq_len]


class LLaMA(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(64, 8)
        self.rot_emb = RotaryEmbedding()
        self.head = nn.Linear(8, 64)

    def update_cacheable_data(self, input_ids: torch.Tensor) -> None:
        self.rot_emb.compute_freqs_cis(input_ids.shape[1])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.rot_emb(self.embedding(input_ids)))


def build() -> nn.Module:
    return LLaMA()


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 64, (1, 12))
    model.update_cacheable_data(input_ids)  # generate(): update cacheable data in the model, outside compile
    with torch.no_grad():
        model(input_ids)
