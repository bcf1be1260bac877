"""Hazard: a LoRA-adapted transformer is compiled, then the pipeline calls `set_adapters([...], adapter_weights=[w])`
with a new weight for each image; PEFT stores `scaling[adapter] = w * alpha / r` as a Python float in a dict on every
LoRA layer, so each new weight fails the guard on that float and recompiles (on torch 2.13 once, after which the
float is made dynamic). From huggingface/diffusers#11408 (set_adapters not supported for compiled model)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import LoraLinear, set_weights_and_activate_adapters

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/diffusers/issues/11408"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class FluxBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_q = LoraLinear(nn.Linear(dim, dim), adapter_name="lora1")
        self.to_v = LoraLinear(nn.Linear(dim, dim), adapter_name="lora1")
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q = self.to_q(hidden_states)
        v = self.to_v(hidden_states)
        return hidden_states + self.proj_out(torch.softmax(q, dim=-1) * v)


class FluxTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.transformer_blocks = nn.ModuleList([FluxBlock() for _ in range(2)])

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states)
        return hidden_states


class FluxPipeline:
    """The pipeline object holding the (compiled) transformer; `set_adapters` forwards to PEFT."""

    def __init__(self, transformer: nn.Module) -> None:
        self.transformer = transformer

    def set_adapters(self, adapter_names: list[str], adapter_weights: list[float]) -> None:
        set_weights_and_activate_adapters(self.transformer, adapter_names, adapter_weights)

    def __call__(self, latents: torch.Tensor, num_inference_steps: int = 2) -> torch.Tensor:
        for _ in range(num_inference_steps):
            latents = latents - 0.1 * self.transformer(latents)
        return latents


def build() -> nn.Module:
    return FluxTransformer()


def step(model: nn.Module, i: int) -> None:
    pipe = FluxPipeline(model)
    # a LoRA-strength sweep: one image per adapter weight
    pipe.set_adapters(["lora1"], adapter_weights=[1.0 - 0.1 * i])
    with torch.no_grad():
        pipe(torch.randn(1, 4, 8), num_inference_steps=2)
