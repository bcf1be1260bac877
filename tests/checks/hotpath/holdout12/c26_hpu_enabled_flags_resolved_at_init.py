"""Clean: the same HPU attention with the feature flags resolved once when the layer is built: `enabled_flags()` (cached detection with env reads and a print) runs in `__init__`, outside the compiled region, and the forward only reads the plain bool `self.fp32_softmax`, which never changes afterwards. Look-alike of HabanaAI/vllm-fork#767."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import enabled_flags

LABEL = None
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/767"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def prompt_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, fp32_softmax: bool) -> torch.Tensor:
    scores = query @ key.transpose(-2, -1) / query.shape[-1] ** 0.5
    if fp32_softmax:
        attn = torch.softmax(scores.float(), dim=-1).to(value.dtype)
    else:
        attn = torch.softmax(scores, dim=-1)
    return attn @ value


class HPUAttentionImpl(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)
        self.fp32_softmax = "fp32_softmax" in enabled_flags()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        return self.o_proj(prompt_attention(q, k, v, self.fp32_softmax))


def build() -> nn.Module:
    return HPUAttentionImpl()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
