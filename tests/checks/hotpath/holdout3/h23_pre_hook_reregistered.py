"""Hazard: a tensor-parallel style plan registers one more forward pre-hook with kwargs on the attention block every step (the old one is never removed), and Dynamo's `___dict_contains(hook_id, _forward_pre_hooks_with_kwargs)` guard fails on each new hook, recompiling the decoder layer until the limit. From pytorch/torchtitan#2130 (HF modeling + TP recompiles)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "hook"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2130"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, position_ids: torch.Tensor | None = None) -> torch.Tensor:
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
        return self.proj(att @ v)


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = SelfAttention()
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.self_attn(self.norm(x), position_ids=None)


def _prepare_input_kwargs(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    # the TP plan's input-layout hook: redistributes inputs (here: a no-op reshape keeps it pure)
    return (args[0].contiguous(),), kwargs


def build() -> nn.Module:
    return DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    # the parallelize helper is re-applied per step (as the HF backend did per microbatch): one more hook each time
    model.self_attn.register_forward_pre_hook(_prepare_input_kwargs, with_kwargs=True)
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
