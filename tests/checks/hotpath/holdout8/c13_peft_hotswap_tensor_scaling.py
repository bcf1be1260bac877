"""Clean: the same hot-swapping server, but before compiling it prepares the model for compiled hot-swap by converting every LoRA `scaling` value to a tensor; the hot-swap then fills the tensor in place with the new adapter's scaling, so the compiled forward sees one tensor and compiles once. Look-alike of h25, from huggingface/peft#2177."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import LoraLinear, convert_scalings_to_tensor, hotswap_adapter

LABEL = None
SOURCE = "https://github.com/huggingface/peft/pull/2177"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

ADAPTER_ALPHAS = [8.0, 8.0, 16.0, 16.0, 4.0, 4.0, 32.0, 32.0]


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
    model = TinyOPTBlock().eval()
    convert_scalings_to_tensor(model)  # prepare_model_for_compiled_hotswap, before compiling
    return model


def step(model: nn.Module, i: int) -> None:
    if i > 0 and ADAPTER_ALPHAS[i] != ADAPTER_ALPHAS[i - 1]:
        hotswap_adapter(model, ADAPTER_ALPHAS[i])
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
