"""Clean: the pipeline installs a fresh, stateless attention-processor object of the same class before every call; the report recompiled on the processor's identity, but on torch 2.13 the new instance passes the guards and the block compiles once. From huggingface/diffusers#11970: torch.compile compatibility with varlen APIs (recompiles on `___check_obj_id(self._modules['attn'].processor, ...)`)."""
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
        self.processor = AttnProcessor()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.processor(self, x)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(x)


def build() -> nn.Module:
    return Block()


def step(model: nn.Module, i: int) -> None:
    model.attn.processor = AttnProcessor()  # set_attn_processor(...) at the start of every pipeline call
    with torch.no_grad():
        model(torch.randn(4, 8))
