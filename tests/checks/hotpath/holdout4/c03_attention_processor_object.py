"""Clean: each attention module delegates to a plain-Python processor object (`AttnProcessor2_0`) that is set once; Dynamo now inlines the user-defined `__call__`, so the transformer block compiles once with no break, unlike the >100 breaks reported in huggingface/diffusers#3218 (excessive graph breaks on attention_processor.py)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/issues/3218"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class AttnProcessor2_0:
    def __call__(
        self,
        attn: "Attention",
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        query = attn.to_q(hidden_states)
        key = attn.to_k(context)
        value = attn.to_v(context)
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)
        return attn.to_out(out)


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = nn.Linear(8, 8)
        self.to_k = nn.Linear(8, 8)
        self.to_v = nn.Linear(8, 8)
        self.to_out = nn.Linear(8, 8)
        self.processor = AttnProcessor2_0()

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor | None = None) -> torch.Tensor:
        return self.processor(self, hidden_states, encoder_hidden_states=encoder_hidden_states, attention_mask=None)


class BasicTransformerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn1 = Attention()
        self.attn2 = Attention()

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn1(hidden_states)
        return hidden_states + self.attn2(hidden_states, encoder_hidden_states=encoder_hidden_states)


def build() -> nn.Module:
    return BasicTransformerBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 8), torch.randn(1, 3, 8))
