"""Clean: the Qwen3-Next gated-delta-net layer of vllm-project/vllm-ascend#10328 where the triton op keeps its debug log but only emits it when `torch.compiler.is_compiling()` is false, so the compiled gated-delta-net layer traces the op without a break."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_c as fla_ops

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm-ascend/issues/10328"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Qwen3NextGatedDeltaNet(nn.Module):
    def __init__(self, hidden: int = 8, num_v_heads: int = 2) -> None:
        super().__init__()
        self.num_v_heads = num_v_heads
        self.in_proj_qkvz = nn.Linear(hidden, 4 * hidden)
        self.in_proj_ba = nn.Linear(hidden, 2 * num_v_heads)
        self.out_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        projected_qkvz = self.in_proj_qkvz(hidden_states)
        projected_ba = self.in_proj_ba(hidden_states)
        mixed_qkv, z, b, a = fla_ops.fused_qkvzba_split_reshape_cat_quiet(projected_qkvz, projected_ba, self.num_v_heads)
        q, k, v = mixed_qkv.chunk(3, dim=-1)
        beta = torch.sigmoid(b).mean(-1, keepdim=True)
        g = -torch.nn.functional.softplus(a).mean(-1, keepdim=True)
        core = v * beta * torch.exp(g) + q * k.sigmoid()
        return self.out_proj(core * torch.nn.functional.silu(z))


def build() -> nn.Module:
    return Qwen3NextGatedDeltaNet()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
