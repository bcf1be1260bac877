"""Clean: the tensor-parallel input hook is registered once when the model is parallelized, before compiling, and the loop only calls the model, so the hook dict never changes and the layer compiles once. The fix direction of pytorch/torchtitan#2130."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/2130"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, position_ids: torch.Tensor | None = None) -> torch.Tensor:
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        return self.proj(torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1) @ v)


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = SelfAttention()
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.self_attn(self.norm(x), position_ids=None)


def _prepare_input_kwargs(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return (args[0].contiguous(),), kwargs


def parallelize(model: DecoderLayer) -> DecoderLayer:
    model.self_attn.register_forward_pre_hook(_prepare_input_kwargs, with_kwargs=True)
    return model


def build() -> nn.Module:
    return parallelize(DecoderLayer())


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
