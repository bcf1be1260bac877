"""Clean: the same compiled transformer with LoRAs hot-swapped into the `default_0` slot between requests, but `prepare_model_for_compiled_hotswap` ran before compiling, so each LoRA layer's scaling is a 0-dim tensor the hotswap fills in place and the compiled forward never sees a new Python float. Look-alike of huggingface/blog#2995."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import (
    LoraLinear,
    hotswap_adapter_from_state_dict,
    prepare_model_for_compiled_hotswap,
)

LABEL = None
SOURCE = "https://github.com/huggingface/blog/pull/2995"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

RANK = 4
LORA_ALPHAS = [4.0, 8.0, 4.0, 16.0, 2.0, 8.0, 32.0, 4.0]  # one user-uploaded LoRA per request


class FluxAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_q = LoraLinear(nn.Linear(dim, dim), "default_0", RANK, 4.0)
        self.to_v = LoraLinear(nn.Linear(dim, dim), "default_0", RANK, 4.0)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, v = self.to_q(x), self.to_v(x)
        return self.to_out(torch.softmax(q @ q.transpose(-1, -2) / 8**0.5, dim=-1) @ v)


def build() -> nn.Module:
    model = FluxAttention()
    prepare_model_for_compiled_hotswap(model)  # before compiling, as the hotswap docs require
    return model


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    state_dict = {}
    for name in ("to_q", "to_v"):
        state_dict[f"{name}.lora_A.weight"] = torch.randn(RANK, 8, generator=g) * 0.01
        state_dict[f"{name}.lora_B.weight"] = torch.randn(8, RANK, generator=g) * 0.01
    alpha = LORA_ALPHAS[i]
    hotswap_adapter_from_state_dict(model, state_dict, "default_0", {"to_q": alpha, "to_v": alpha})
    with torch.no_grad():
        model(torch.randn(1, 6, 8))
