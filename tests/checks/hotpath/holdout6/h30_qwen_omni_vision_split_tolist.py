"""Hazard: the Qwen2.5-Omni vision encoder (`model.thinker.visual`) is compiled; its `cu_seqlens` come from
`repeat_interleave` over `grid_thw`, and every `VisionAttention` splits q/k/v per image with `lengths.tolist()` and
`torch.split`, so Dynamo breaks the graph in each block (and the block loop) instead of capturing one graph. From
huggingface/transformers#45816 (fix torch.compile graph breaks in Qwen2.5-Omni vision encoder: `lengths.tolist()` +
`torch.split()` is a graph break inside every block)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/pull/45816"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 5}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 7, "graph_breaks": 5}}  # 2.11 re-measured on the CPU-only machine, 2.11.0+cu130 (the earlier record: 6 compiles, 4 breaks)


class Qwen2_5OmniVisionAttention(nn.Module):
    def __init__(self, dim: int = 8, num_heads: int = 2) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)
        q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))  # (1, heads, seq, head_dim)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        splits = [torch.split(tensor, lengths.tolist(), dim=2) for tensor in (q, k, v)]
        attn_outputs = [F.scaled_dot_product_attention(qi, ki, vi) for qi, ki, vi in zip(*splits)]
        attn_output = torch.cat(attn_outputs, dim=2)
        attn_output = attn_output.squeeze(0).transpose(0, 1).reshape(seq_length, -1)
        return self.proj(attn_output)


class Qwen2_5OmniVisionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.RMSNorm(dim)
        self.norm2 = nn.RMSNorm(dim)
        self.attn = Qwen2_5OmniVisionAttention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.SiLU(), nn.Linear(16, dim))

    def forward(self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states), cu_seqlens=cu_seqlens)
        return hidden_states + self.mlp(self.norm2(hidden_states))


class Qwen2_5OmniVisionEncoder(nn.Module):
    def __init__(self, patch_dim: int = 12, dim: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, dim, bias=False)
        self.blocks = nn.ModuleList([Qwen2_5OmniVisionBlock(dim) for _ in range(depth)])
        self.merger = nn.Sequential(nn.RMSNorm(dim), nn.Linear(dim, dim))

    def forward(self, hidden_states: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        hidden_states = self.patch_embed(hidden_states)
        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(
            dim=0, dtype=torch.int32)
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens)
        return self.merger(hidden_states)


class Qwen2_5OmniThinker(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.visual = Qwen2_5OmniVisionEncoder()
        self.lm_head = nn.Linear(8, 16)

    def forward(self, pixel_values: torch.Tensor, image_grid_thw: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.visual(pixel_values, grid_thw=image_grid_thw))


class Qwen2_5OmniModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.thinker = Qwen2_5OmniThinker()

    def forward(self, pixel_values: torch.Tensor, image_grid_thw: torch.Tensor) -> torch.Tensor:
        return self.thinker(pixel_values, image_grid_thw)


REGION = "thinker.visual"  # torch.compile(model.thinker.visual)


def build() -> nn.Module:
    return Qwen2_5OmniModel()


def step(model: nn.Module, i: int) -> None:
    image_grid_thw = torch.tensor([[1, 2, 2], [1, 2, 2]])  # two images of 2x2 patches each
    pixel_values = torch.randn(8, 12)
    with torch.no_grad():
        model(pixel_values, image_grid_thw)
