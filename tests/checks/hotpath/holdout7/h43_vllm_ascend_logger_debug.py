"""Hazard: vllm-ascend added a `logger.debug(...)` at the top of the triton op `fused_qkvzba_split_reshape_cat`, which Qwen3-Next's gated-delta-net layer calls inside the region vLLM compiles; Dynamo cannot trace the logging call and breaks the graph (fatal under vLLM's full-graph compile). From vllm-project/vllm-ascend#10328."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_c as fla_ops

LABEL = "graph-break"
SOURCE = "https://github.com/vllm-project/vllm-ascend/issues/10328"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


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
        mixed_qkv, z, b, a = fla_ops.fused_qkvzba_split_reshape_cat(projected_qkvz, projected_ba, self.num_v_heads)
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
