"""Hazard: a torchtitan-style transformer block is compiled whole while its MoE `experts` submodule is wrapped by an
FSDP-style sharding helper that installs a forward pre-hook (all-gather) marked `torch.compiler.disable`; Dynamo
cannot trace the disabled hook when the block calls `experts`, so the block's graph breaks there (the pieces before
and after run as separate frames on every step). From
pytorch/torchtitan#1182 (compile with llama4 MoE: FSDP wrapping of the MoE layer installs hooks that compile graph
breaks on)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "pre-hook"
SOURCE = "https://github.com/pytorch/torchtitan/pull/1182"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class _FSDPState:
    """Stands for FSDP2's per-module state: unshards parameters before forward."""

    def __init__(self) -> None:
        self.unsharded = False

    @torch.compiler.disable
    def pre_forward(self, module: nn.Module, args):
        self.unsharded = True  # all-gather would happen here
        return args


def fully_shard(module: nn.Module) -> nn.Module:
    state = _FSDPState()
    module._fsdp_state = state
    module.register_forward_pre_hook(state.pre_forward)
    return module


class GroupedExperts(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(4, 8, 16) * 0.1)
        self.w2 = nn.Parameter(torch.randn(4, 16, 8) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.silu(torch.bmm(x.view(4, -1, 8), self.w1))
        return torch.bmm(h, self.w2).reshape(-1, 8)


class TransformerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(8)
        self.attention = nn.Linear(8, 8)
        self.ffn_norm = nn.LayerNorm(8)
        self.router = nn.Linear(8, 4, bias=False)
        self.experts = fully_shard(GroupedExperts())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x))
        t = self.ffn_norm(h)
        scores = torch.softmax(self.router(t), dim=-1)
        out = self.experts(t.repeat(4, 1)).view(4, -1, 8)
        return h + (out * scores.t().unsqueeze(-1)).sum(0)


def build() -> nn.Module:
    return TransformerBlock()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(8, 8)).sum().backward()
