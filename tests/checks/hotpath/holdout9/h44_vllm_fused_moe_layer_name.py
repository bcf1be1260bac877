"""Hazard: each Mixtral decoder layer is compiled as its own region, and its FusedMoE passes its `layer_name` string ("model.layers.N.block_sparse_moe.experts") to a dispatcher that looks the layer up in the static forward context, so Dynamo guards on the string and recompiles once per layer until the recompile limit. From vllm-project/vllm-gaudi#158 (patch FusedMoE forward to avoid dynamo recompilations)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_c import moe_forward, register_layer, static_forward_context

LABEL = "per-instance"
SOURCE = "https://github.com/vllm-project/vllm-gaudi/pull/158"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "model.layers.*"


class FusedMoE(nn.Module):
    def __init__(self, num_experts: int, hidden: int, prefix: str) -> None:
        super().__init__()
        self.layer_name = prefix
        self.w13 = nn.Parameter(torch.randn(num_experts, hidden, hidden) * 0.1)
        register_layer(prefix, self)

    def forward_impl(self, hidden_states: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(router_logits, dim=-1)
        expert_out = torch.einsum("th,ehd->ted", hidden_states, self.w13)
        return (weights.unsqueeze(-1) * expert_out).sum(1)

    def forward(self, hidden_states: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:
        return moe_forward(hidden_states, router_logits, self.layer_name)


class MixtralMoE(nn.Module):
    def __init__(self, hidden: int, prefix: str) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, 4, bias=False)
        self.experts = FusedMoE(4, hidden, prefix=f"{prefix}.experts")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.experts(hidden_states, self.gate(hidden_states))


class MixtralDecoderLayer(nn.Module):
    def __init__(self, hidden: int, prefix: str) -> None:
        super().__init__()
        self.post_attention_layernorm = nn.LayerNorm(hidden)
        self.block_sparse_moe = MixtralMoE(hidden, prefix=f"{prefix}.block_sparse_moe")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.block_sparse_moe(self.post_attention_layernorm(hidden_states))


class MixtralModel(nn.Module):
    def __init__(self, hidden: int = 8, num_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(MixtralDecoderLayer(hidden, f"model.layers.{i}") for i in range(num_layers))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class MixtralForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = MixtralModel()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.model(hidden_states)


def build() -> nn.Module:
    static_forward_context.no_compile_layers.clear()  # a fresh engine
    return MixtralForCausalLM()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
