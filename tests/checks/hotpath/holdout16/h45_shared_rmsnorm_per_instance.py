"""Hazard: every norm of the model is one `Gemma4RMSNorm` class, and each norm module is compiled as its own region; they all share one `forward` code object, so Dynamo's cache for that frame is keyed on every per-instance difference it guards: the residual norms have hidden-width weights and `with_scale=True`, the q/k norms head-width weights and `with_scale=False` (a Python bool baked into the graph), so the second kind of instance recompiles. From unslothai/unsloth-zoo#1003 (stop the shared RMSNorm kernel from recompiling per norm instance: guards on weight size "expected 64, actual 768", input rank and `self.with_scale`; 17 of 25 recompiles were this one frame, until FailOnRecompileLimitHit)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import Gemma4RMSNorm

LABEL = "per-instance"
SOURCE = "https://github.com/unslothai/unsloth-zoo/pull/1003"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "layers.*.norms.*"


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        head_dim = dim // heads
        self.norms = nn.ModuleDict(
            {
                "input": Gemma4RMSNorm(dim),
                "q": Gemma4RMSNorm(head_dim, with_scale=False),
                "k": Gemma4RMSNorm(head_dim, with_scale=False),
                "post": Gemma4RMSNorm(dim),
            }
        )
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norms["input"](x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k = self.norms["q"](q), self.norms["k"](k)
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
