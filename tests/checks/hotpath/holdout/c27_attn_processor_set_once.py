"""Clean: the attention processor is installed once before the first compiled call and reused on every step. Look-alike of huggingface/diffusers#11970 (recompiles only came from swapping the processor object)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/11970"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class AttnProcessor:
    def __call__(self, attn: nn.Module, x: torch.Tensor) -> torch.Tensor:
        q, k, v = attn.to_q(x), attn.to_k(x), attn.to_v(x)
        return torch.softmax(q @ k.t() / 8 ** 0.5, dim=-1) @ v


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = nn.Linear(8, 8)
        self.to_k = nn.Linear(8, 8)
        self.to_v = nn.Linear(8, 8)
        self.processor = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.processor(self, x)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(x)


PROCESSOR = AttnProcessor()


def build() -> nn.Module:
    block = Block()
    block.attn.processor = PROCESSOR
    return block


def step(model: nn.Module, i: int) -> None:
    model.attn.processor = PROCESSOR  # the pipeline re-installs the same processor object each call
    with torch.no_grad():
        model(torch.randn(4, 8))
