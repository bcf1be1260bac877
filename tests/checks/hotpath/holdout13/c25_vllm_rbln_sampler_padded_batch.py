"""Clean: the same compiled sampler, but the runner pads the running requests up to the max batch size it was warmed up with (the padded rows get temperature 1 and are dropped afterwards), so the sampler always sees one shape and is compiled once. Look-alike of RBLN-SW/vllm-rbln#153."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/153"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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

    max_num_seqs = 4

    def execute_model(self, hidden_states: torch.Tensor, sampling_metadata: SamplingMetadata) -> torch.Tensor:
        num_reqs = hidden_states.shape[0]
        pad = self.max_num_seqs - num_reqs
        logits = torch.nn.functional.pad(self.lm_head(hidden_states), (0, 0, 0, pad))
        padded = SamplingMetadata(
            temperature=torch.nn.functional.pad(sampling_metadata.temperature, (0, pad), value=1.0),
            top_k=torch.nn.functional.pad(sampling_metadata.top_k, (0, pad), value=4),
        )
        return self.sampler(logits, padded)[:num_reqs]


REGION = "sampler"


def build() -> nn.Module:
    return RBLNModelRunner()


def step(model: nn.Module, i: int) -> None:
    num_reqs = [1, 2, 3, 4, 4, 3, 2, 1][i]  # requests join, then finish
    metadata = SamplingMetadata(temperature=torch.full((num_reqs,), 0.7), top_k=torch.full((num_reqs,), 4))
    with torch.no_grad():
        model.execute_model(torch.randn(num_reqs, 8), metadata)
