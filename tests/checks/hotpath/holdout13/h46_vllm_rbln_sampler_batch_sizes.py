"""Hazard: vllm-rbln compiles the sampler, and the engine calls it with the current number of running requests, which grows from 1 towards the max batch size as requests join and shrinks as they finish; the batch dimension is specialised on the first call, so the sampler is recompiled when the batch size first changes (and per batch size wherever shapes are kept static). From RBLN-SW/vllm-rbln#153 (fix recompile_limit when compiling the sampler)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/153"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


@dataclass
class SamplingMetadata:
    temperature: torch.Tensor  # [num_reqs]
    top_k: torch.Tensor  # [num_reqs]


class Sampler(nn.Module):
    def forward(self, logits: torch.Tensor, sampling_metadata: SamplingMetadata) -> torch.Tensor:
        logits = logits / sampling_metadata.temperature.unsqueeze(-1)
        kth = torch.topk(logits, k=4, dim=-1).values[:, -1:]
        logits = torch.where(logits < kth, torch.full_like(logits, float("-inf")), logits)
        probs = torch.softmax(logits, dim=-1)
        return probs.argmax(dim=-1)


class RBLNModelRunner(nn.Module):
    def __init__(self, hidden: int = 8, vocab: int = 16) -> None:
        super().__init__()
        self.lm_head = nn.Linear(hidden, vocab)
        self.sampler = Sampler()

    def execute_model(self, hidden_states: torch.Tensor, sampling_metadata: SamplingMetadata) -> torch.Tensor:
        return self.sampler(self.lm_head(hidden_states), sampling_metadata)


REGION = "sampler"


def build() -> nn.Module:
    return RBLNModelRunner()


def step(model: nn.Module, i: int) -> None:
    num_reqs = [1, 2, 3, 4, 4, 3, 2, 1][i]  # requests join, then finish
    metadata = SamplingMetadata(temperature=torch.full((num_reqs,), 0.7), top_k=torch.full((num_reqs,), 4))
    with torch.no_grad():
        model.execute_model(torch.randn(num_reqs, 8), metadata)
