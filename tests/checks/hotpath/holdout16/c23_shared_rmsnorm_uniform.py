"""Clean: the same decoder with one shared RMSNorm class compiled per norm instance, but every instance is alike (hidden-width weight, scale always applied, q/k normalised by the attention itself rather than by head-width norms), so the one shared `forward` frame compiles once and every other instance reuses it. The per-instance axes named in unslothai/unsloth-zoo#1003 (weight size, `with_scale`, input rank) are all constant here."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import Gemma4RMSNorm

LABEL = None
SOURCE = "https://github.com/unslothai/unsloth-zoo/pull/1003"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*.norms.*"


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.norms = nn.ModuleDict({"input": Gemma4RMSNorm(dim), "post": Gemma4RMSNorm(dim)})
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norms["input"](x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        attn = nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return x + self.norms["post"](self.o(attn.transpose(1, 2).reshape(b, t, d)))


class TinyGemma(nn.Module):
    def __init__(self, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.layers = nn.ModuleList(DecoderLayer() for _ in range(layers))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    return TinyGemma()


def step(model: nn.Module, i: int) -> None:
    model(torch.randint(0, 16, (2, 5))).pow(2).mean().backward()
