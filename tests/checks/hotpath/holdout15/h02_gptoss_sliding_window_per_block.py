"""Hazard: a GPT-OSS-style decoder alternates sliding-window and full attention, each attention module keeping its own Python `sliding_window_size` (an int or None) that forward reads to build the mask; torchtitan compiles every TransformerBlock on its own, so the blocks that differ in that attribute fail each other's guards and the shared block code is compiled once per distinct value. From pytorch/torchtitan#3687 (enabling GPT-OSS in the titan RL loop: `recompile_limit = 32 if has_sliding_window else 10`, "measured w/ TORCH_LOGS=recompiles and counted 11")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/torchtitan/pull/3687"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "layers.*"


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, sliding_window_size: int | None) -> None:
        super().__init__()
        self.heads = heads
        self.sliding_window_size = sliding_window_size
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        pos = torch.arange(t, device=x.device)
        mask = pos[:, None] >= pos[None, :]
        if self.sliding_window_size is not None:
            mask = mask & (pos[:, None] - pos[None, :] < self.sliding_window_size)
        y = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.wo(y.transpose(1, 2).reshape(b, t, d))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, sliding_window_size: int | None) -> None:
        super().__init__()
        self.attention_norm = nn.RMSNorm(dim)
        self.attention = Attention(dim, heads, sliding_window_size)
        self.ffn_norm = nn.RMSNorm(dim)
        self.feed_forward = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class GptOssLike(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, heads: int = 2, n_layers: int = 4, window: int = 3) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        # layer types alternate: sliding_attention, full_attention, ...
        self.layers = nn.ModuleDict(
            {str(i): TransformerBlock(dim, heads, window if i % 2 == 0 else None) for i in range(n_layers)}
        )
        self.norm = nn.RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h)
        return self.output(self.norm(h))


def build() -> nn.Module:
    return GptOssLike()


def step(model: nn.Module, i: int) -> None:
    tokens = torch.randint(0, 32, (2, 6))
    logits = model(tokens[:, :-1])
    nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()).backward()
