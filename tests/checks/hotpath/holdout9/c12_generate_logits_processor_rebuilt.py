"""Clean: transformers' `generate()` builds a fresh LogitsProcessorList (temperature, top-k warpers) on every call and the compiled decoding step calls it, which was reported as a `Cache line invalidated because list.__getitem__(L['self'], 0) got deallocated` recompile per call; on torch 2.13 the fresh processors (same types, same temperature/top_k) pass the guards and it compiles once. From pytorch/pytorch#141196 (torch.compile + Huggingface GenerationMixin)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_b import get_logits_processor

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/141196"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TinyCausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)
        self.logits_processor = None  # set per generate() call, as GenerationMixin does

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        scores = self.lm_head(self.embed(input_ids))[:, -1, :]
        scores = self.logits_processor(input_ids, scores)
        return torch.softmax(scores, dim=-1)


def build() -> nn.Module:
    return TinyCausalLM()


def step(model: nn.Module, i: int) -> None:
    # one generate() call per request: _get_logits_processor() runs again with the same generation config
    model.logits_processor = get_logits_processor(temperature=0.7, top_k=4)
    with torch.no_grad():
        model(torch.randint(0, 16, (1, 6)))
