"""Hazard: compiling a Megatron-core transformer layer built with the TransformerEngine spec: TE decorates its module forwards (`LayerNormLinear`, used by `TELayerNormColumnParallelLinear`) with `no_torch_dynamo()`, i.e. `torch._dynamo.disable`, so every call into the TE linear from the compiled layer is a graph break and the layer is split around each projection. From NVIDIA/Megatron-LM#1015 (integrating torch.compile with Megatron/TransformerEngine)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import LayerNormLinear

LABEL = "graph-break"
SOURCE = "https://github.com/NVIDIA/Megatron-LM/issues/1015"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 6}


class TELayerNormColumnParallelLinear(LayerNormLinear):
    def __init__(self, input_size: int, output_size: int, tp_size: int = 1) -> None:
        super().__init__(input_size, output_size // tp_size)

    def forward(self, x: torch.Tensor):
        out = super().forward(x)
        return out, None  # (output, bias) like every Megatron parallel linear


class SelfAttention(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.linear_qkv = TELayerNormColumnParallelLinear(hidden, 3 * hidden)
        self.linear_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        mixed_qkv, _ = self.linear_qkv(hidden_states)
        q, k, v = mixed_qkv.chunk(3, dim=-1)
        core = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.linear_proj(core)


class MLP(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.linear_fc1 = TELayerNormColumnParallelLinear(hidden, 4 * hidden)
        self.linear_fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        inter, _ = self.linear_fc1(hidden_states)
        return self.linear_fc2(torch.nn.functional.gelu(inter))


class TransformerLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attention = SelfAttention()
        self.mlp = MLP()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attention(hidden_states)
        return hidden_states + self.mlp(hidden_states)


def build() -> nn.Module:
    return TransformerLayer()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 4, 8))
    out.float().pow(2).mean().backward()
