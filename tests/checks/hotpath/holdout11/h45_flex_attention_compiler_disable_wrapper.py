"""Hazard: a diffusion transformer block wraps its separately compiled flex-attention call in `@torch.compiler.disable(recursive=False)` (the "compile friendly flex attention" recipe) and then compiles the whole block, so Dynamo breaks the block's graph at the disabled wrapper on every call. From pytorch/pytorch#143163 (cannot compile a block that contains Flex attention without graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/143163"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


def _flex_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_mask=None) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if block_mask is not None:
        scores = scores.masked_fill(~block_mask, float("-inf"))
    return scores.softmax(-1) @ v


# the stand-in kernel is compiled on its own, as the recipe does (eager backend keeps the case fast on CPU)
flex_attention_compiled = torch.compile(_flex_attention, dynamic=False, backend="eager")


@torch.compiler.disable(recursive=False)
def compile_friendly_flex_attention(q, k, v, block_mask=None):
    return flex_attention_compiled(q, k, v, block_mask=block_mask)


class DiTBlock(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = compile_friendly_flex_attention(q, k, v)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


def build() -> nn.Module:
    return DiTBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
