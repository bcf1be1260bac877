"""Hazard: the HPU attention ops ask `"fp32_softmax" in enabled_flags()` on every forward; `enabled_flags` is a `functools.cache`d feature-detection function (env reads, `And`/`Not` feature-test objects, a `print` of the detected flags) and Dynamo ignores the cache wrapper and traces the whole detection each time, breaking the graph in the compiled attention. From HabanaAI/vllm-fork#767 (fix for compile recompilations due to @cache and "and" used by enabled_flags)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import enabled_flags

LABEL = "helper-module"
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/767"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


def prompt_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    scores = query @ key.transpose(-2, -1) / query.shape[-1] ** 0.5
    if "fp32_softmax" in enabled_flags():
        attn = torch.softmax(scores.float(), dim=-1).to(value.dtype)
    else:
        attn = torch.softmax(scores, dim=-1)
    return attn @ value


class HPUAttentionImpl(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        return self.o_proj(prompt_attention(q, k, v))


def build() -> nn.Module:
    return HPUAttentionImpl()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
