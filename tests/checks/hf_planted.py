"""A Hugging Face Llama with hazards planted in its own classes, at Llama-3's real shapes: a per-call counter in every
decoder layer (a recompile on every call) and a print in the final norm (a graph break). Built on the meta device it
cannot run; its twin (the same class, `compile-contract init` writes it) carries the same hazards to the probe."""

from __future__ import annotations

from typing import Any

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRMSNorm

from tests.checks.hf_shapes import _LLAMA3


class CountingLayer(LlamaDecoderLayer):
    """Counts its calls in a Python int: Dynamo guards on the value and recompiles on every call."""

    calls = 0

    def forward(self, hidden_states: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        self.calls += 1
        return super().forward(hidden_states, *args, **kwargs)


class ChattyNorm(LlamaRMSNorm):
    """Prints on every call: a graph break in the compiled norm."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        print(end="")
        return super().forward(hidden_states)


class PlantedLlama(LlamaForCausalLM):
    """`LlamaForCausalLM` whose decoder layers count their calls and whose final norm prints."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__(config)
        for layer in self.model.layers:
            layer.__class__ = CountingLayer
        self.model.norm.__class__ = ChattyNorm


def llama3_8b() -> PlantedLlama:
    config = LlamaConfig(
        **_LLAMA3, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32
    )
    return PlantedLlama(config).eval()


def llama3_70b() -> PlantedLlama:
    config = LlamaConfig(
        **_LLAMA3, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64
    )
    return PlantedLlama(config).eval()
