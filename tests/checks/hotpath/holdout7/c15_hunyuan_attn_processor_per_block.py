"""Clean: HunyuanVideo's transformer blocks compiled block by block, each block holding its own `HunyuanVideoAttnProcessor2_0()` instance on `attn.processor`; on the reporter's torch the shared block `forward` was guarded on each processor's identity and recompiled per block until `recompile_limit` (8), but torch 2.13 guards only the processor's type, so the graph compiled for the first block serves all ten and the forward compiles once. From huggingface/diffusers#10932 (HunyuanVideo pipe.transformer.compile(): torch._dynamo hit config.recompile_limit (8))."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/issues/10932"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "transformer_blocks.*"


class HunyuanVideoAttnProcessor2_0:
    def __call__(self, attn: "Attention", hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        joint = torch.cat([hidden_states, encoder_hidden_states], dim=1)
        q, k, v = attn.to_q(hidden_states), attn.to_k(joint), attn.to_v(joint)
        out = F.scaled_dot_product_attention(q, k, v)
        return attn.to_out(out)


class Attention(nn.Module):
    def __init__(self, dim: int, processor) -> None:
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)
        self.processor = processor

    def set_processor(self, processor) -> None:
        self.processor = processor

    def forward(self, hidden_states, encoder_hidden_states):
        return self.processor(self, hidden_states, encoder_hidden_states)


class HunyuanVideoTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, processor=HunyuanVideoAttnProcessor2_0())
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states, encoder_hidden_states, temb):
        norm_hidden_states = self.norm1(hidden_states) * (1 + temb[:, None])
        hidden_states = hidden_states + self.attn(norm_hidden_states, encoder_hidden_states)
        return hidden_states + self.ff(hidden_states)


class HunyuanVideoTransformer3DModel(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 10) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(dim, dim)
        self.time_embed = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(HunyuanVideoTransformerBlock(dim) for _ in range(num_layers))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states, encoder_hidden_states, timestep):
        temb = self.time_embed(timestep[:, None])
        hidden_states = self.x_embedder(hidden_states)
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, encoder_hidden_states, temb)
        return self.proj_out(hidden_states)


def build() -> nn.Module:
    return HunyuanVideoTransformer3DModel().eval()


def step(model: nn.Module, i: int) -> None:
    latents, prompt_embeds = torch.randn(1, 6, 8), torch.randn(1, 4, 8)
    with torch.no_grad():
        model(latents, prompt_embeds, torch.tensor([1000.0 - 125.0 * i]))
