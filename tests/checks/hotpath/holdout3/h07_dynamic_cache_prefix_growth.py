"""Hazard: greedy decoding with a DynamicCache — each step concatenates the new key/value onto the cached ones, so the compiled decoder sees a longer cache every call and recompiles once the lengths differ (then runs a dynamic-shape graph). From huggingface/accelerate#3543 (DynamicCache results in dynamo recompiles when input length changed)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = "shape"
SOURCE = "https://github.com/huggingface/accelerate/issues/3543"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int = 8, vocab: int = 16, layer_idx: int = 0) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.embed = nn.Embedding(vocab, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.q_proj = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids: torch.Tensor, past_key_values: _helpers_a.DynamicCache) -> torch.Tensor:
        h = self.embed(input_ids)
        k, v = past_key_values.update(self.k_proj(h), self.v_proj(h), self.layer_idx)
        attn = torch.softmax(self.q_proj(h) @ k.transpose(-1, -2) / 8**0.5, dim=-1) @ v
        return self.lm_head(attn)


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.decoder = DecoderLayer()
        self.cache = _helpers_a.DynamicCache()
        self.next_tokens = torch.zeros(1, 1, dtype=torch.long)


def build() -> nn.Module:
    return Generator()


REGION = "decoder"


def step(model: nn.Module, i: int) -> None:
    # one greedy decoding step per call; the cache grows by one position each time
    with torch.no_grad():
        logits = model.decoder(model.next_tokens, model.cache)
    model.next_tokens = logits[:, -1:].argmax(-1)
