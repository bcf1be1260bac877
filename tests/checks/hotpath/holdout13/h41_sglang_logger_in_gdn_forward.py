"""Hazard: a Qwen3.5 gated-delta-net layer logs a one-time fallback warning (`print_warning_once` -> `logger.warning`) from inside its forward when the fused kernel is not supported on the device; Dynamo cannot trace the logger call, so every compiled forward graph-breaks there. From sgl-project/sglang#19573 (piecewise CUDA graph for Qwen3.5 on sm100: "Logger not supported for non-export cases")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import print_warning_once

LABEL = "graph-break"
SOURCE = "https://github.com/sgl-project/sglang/pull/19573"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}

_FUSED_GDN_SUPPORTED = False  # decided at import from the device capability (sm100 here: no fused kernel)


class GatedDeltaNet(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.in_proj = nn.Linear(hidden, 2 * hidden)
        self.out_proj = nn.Linear(hidden, hidden)

    def _torch_chunk_gated_delta_rule(self, q: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(q * torch.sigmoid(g), dim=0)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, g = self.in_proj(hidden_states).chunk(2, dim=-1)
        if not _FUSED_GDN_SUPPORTED:
            print_warning_once("fused gated delta rule kernel is not available on this device, using the torch fallback")
        return self.out_proj(self._torch_chunk_gated_delta_rule(q, g))


class Qwen3_5DecoderLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.linear_attn = GatedDeltaNet(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU())

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.linear_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(hidden_states)


def build() -> nn.Module:
    return Qwen3_5DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
