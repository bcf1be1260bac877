"""Hazard: the model's mask helper asks `0.0 in attention_mask` to decide whether the flash-attention path needs the padding mask at all; `Tensor.__contains__` reads the tensor's value in Python, so Dynamo breaks the graph there on every forward. From huggingface/transformers#37944 (fix graph break for torch.compile in attention mask check)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/pull/37944"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


@dataclass
class Qwen3Config:
    hidden_size: int = 8
    vocab_size: int = 32
    _attn_implementation: str = "flash_attention_2"


class Qwen3Model(nn.Module):
    def __init__(self, config: Qwen3Config) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layer = nn.Linear(config.hidden_size, config.hidden_size)

    def _update_causal_mask(self, attention_mask: torch.Tensor | None, input_tensor: torch.Tensor):
        if self.config._attn_implementation == "flash_attention_2":
            if attention_mask is not None and 0.0 in attention_mask:
                return attention_mask
            return None
        return attention_mask

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids)
        causal_mask = self._update_causal_mask(attention_mask, hidden_states)
        hidden_states = self.layer(hidden_states)
        if causal_mask is not None:
            hidden_states = hidden_states * causal_mask[..., None].to(hidden_states.dtype)
        return hidden_states


def build() -> nn.Module:
    return Qwen3Model(Qwen3Config())


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 32, (2, 6))
    attention_mask = torch.ones(2, 6)
    attention_mask[1, :2] = 0  # left padding in the second sequence
    with torch.no_grad():
        model(input_ids, attention_mask)
