"""Hazard: a regional-prompting cross-attention processor receives the regional prompt embeddings as a Python list (one tensor per region, plus one mask per region) through `cross_attention_kwargs`; the number of regions changes from render to render, so the compiled UNet block is guarded on the list length and recompiles for each new count. From chengzeyi/stable-fast#131 (too much recompilation after modifying the cross attention processor for regional prompt)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/chengzeyi/stable-fast/issues/131"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)
        self.processor = RegionalAttnProcessor()

    def forward(self, hidden_states, encoder_hidden_states, **cross_attention_kwargs):
        return self.processor(self, hidden_states, encoder_hidden_states, **cross_attention_kwargs)


class RegionalAttnProcessor:
    """AttnProcessor2_0 modified for regional prompting: each region's prompt attends only inside its mask."""

    def __call__(self, attn, hidden_states, encoder_hidden_states, regional_embeds=None, regional_masks=None):
        q = attn.to_q(hidden_states)
        out = torch.nn.functional.scaled_dot_product_attention(
            q, attn.to_k(encoder_hidden_states), attn.to_v(encoder_hidden_states)
        )
        if regional_embeds is not None:
            for embeds, mask in zip(regional_embeds, regional_masks):
                region = torch.nn.functional.scaled_dot_product_attention(q, attn.to_k(embeds), attn.to_v(embeds))
                out = out * (1 - mask) + region * mask
        return attn.to_out(out)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn2 = Attention(dim)

    def forward(self, hidden_states, encoder_hidden_states, cross_attention_kwargs=None):
        return hidden_states + self.attn2(self.norm(hidden_states), encoder_hidden_states, **(cross_attention_kwargs or {}))


def build() -> nn.Module:
    return TransformerBlock()


def step(model: nn.Module, i: int) -> None:
    n_regions = [1, 2, 1, 3, 2, 3, 1, 2][i]  # the user draws a different number of regions per render
    embeds = [torch.randn(1, 4, 8) for _ in range(n_regions)]
    masks = [(torch.rand(1, 6, 1) > 0.5).float() for _ in range(n_regions)]
    with torch.no_grad():
        model(torch.randn(1, 6, 8), torch.randn(1, 4, 8), {"regional_embeds": embeds, "regional_masks": masks})
