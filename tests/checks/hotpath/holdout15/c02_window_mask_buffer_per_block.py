"""Clean: the same per-block compile of a decoder whose layers alternate sliding-window and full attention, but each attention module bakes its window into a boolean mask buffer at construction; forward only reads the buffer, so every block presents the same Python state and the repeated TransformerBlock code compiles once for all layers. torchtitan compiles each TransformerBlock separately precisely so that identical blocks share one compiled graph (pytorch/torchtitan#479: "Because TransformerBlock has the same pattern repeated multiple times, ideally compiler should only compile once")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/issues/479"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*"


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, max_seq_len: int, sliding_window_size: int | None) -> None:
        super().__init__()
        self.heads = heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        pos = torch.arange(max_seq_len)
        mask = pos[:, None] >= pos[None, :]
        if sliding_window_size is not None:
            mask = mask & (pos[:, None] - pos[None, :] < sliding_window_size)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:t, :t])
        return self.wo(y.transpose(1, 2).reshape(b, t, d))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, max_seq_len: int, sliding_window_size: int | None) -> None:
        super().__init__()
        self.attention_norm = nn.RMSNorm(dim)
        self.attention = Attention(dim, heads, max_seq_len, sliding_window_size)
        self.ffn_norm = nn.RMSNorm(dim)
        self.feed_forward = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class GptOssLike(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, heads: int = 2, n_layers: int = 4, window: int = 3) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleDict(
            {str(i): TransformerBlock(dim, heads, 16, window if i % 2 == 0 else None) for i in range(n_layers)}
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
