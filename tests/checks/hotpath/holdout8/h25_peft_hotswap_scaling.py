"""Hazard: a server compiles a PEFT-LoRA model once and hot-swaps adapters between requests; each new adapter has its own `lora_alpha`, and the hot-swap writes the new Python float into the LoRA layers' `scaling` dict, which the compiled forward reads, so the swapped-in scaling fails the guard and recompiles. From huggingface/peft#2177 (Hotswap allow different alpha scalings and ranks: convert the scalings to tensors to prevent recompilation)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import LoraLinear, hotswap_adapter

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/peft/pull/2177"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

ADAPTER_ALPHAS = [8.0, 8.0, 16.0, 16.0, 4.0, 4.0, 32.0, 32.0]  # lora_alpha of the adapter served at each request


class TinyOPTBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = LoraLinear(nn.Linear(dim, dim), r=2, lora_alpha=ADAPTER_ALPHAS[0])
        self.v_proj = LoraLinear(nn.Linear(dim, dim), r=2, lora_alpha=ADAPTER_ALPHAS[0])
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attn = torch.softmax(self.q_proj(x) @ x.transpose(-1, -2), dim=-1)
        return self.out(attn @ self.v_proj(x))


def build() -> nn.Module:
    return TinyOPTBlock().eval()


def step(model: nn.Module, i: int) -> None:
    if i > 0 and ADAPTER_ALPHAS[i] != ADAPTER_ALPHAS[i - 1]:
        hotswap_adapter(model, ADAPTER_ALPHAS[i])
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
