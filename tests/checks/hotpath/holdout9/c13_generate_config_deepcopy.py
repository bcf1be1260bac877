"""Clean: the compiled generation entry point runs `_prepare_generation_config`, which `copy.deepcopy`s the model's GenerationConfig and updates it with the call's kwargs; this graph-broke when reported, but torch 2.13 traces the deepcopy of the plain config object and compiles once with no break. From huggingface/transformers#31297 (graph break + warning instead of error in _prepare_generation_config)."""
from __future__ import annotations

import copy

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/31297"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 3, "graph_breaks": 2}}  # measured on the H100 machine


class GenerationConfig:
    def __init__(self, **kwargs) -> None:
        self.temperature = kwargs.pop("temperature", 1.0)
        self.max_new_tokens = kwargs.pop("max_new_tokens", 1)
        self.do_sample = kwargs.pop("do_sample", False)

    def update(self, **kwargs) -> dict:
        unused = {}
        for key, value in kwargs.items():
            if hasattr(self, key):
                setattr(self, key, value)
            else:
                unused[key] = value
        return unused


class MiniCPMForCausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)
        self.generation_config = GenerationConfig(temperature=0.7)

    def _prepare_generation_config(self, generation_config, **kwargs):
        if generation_config is None:
            generation_config = self.generation_config
        generation_config = copy.deepcopy(generation_config)
        model_kwargs = generation_config.update(**kwargs)
        return generation_config, model_kwargs

    def forward(self, input_ids: torch.Tensor, generation_config=None, **kwargs) -> torch.Tensor:
        generation_config, _ = self._prepare_generation_config(generation_config, **kwargs)
        logits = self.lm_head(self.embed(input_ids))[:, -1, :]
        return torch.softmax(logits / generation_config.temperature, dim=-1)


def build() -> nn.Module:
    return MiniCPMForCausalLM()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randint(0, 16, (1, 6)), max_new_tokens=4)
