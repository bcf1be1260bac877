"""Hazard: an RL rollout's compiled sampler sees batch size 1 once some prompts finish, and Dynamo specialises size 1 separately from the dynamic batch dimension, so the sampler recompiles mid-rollout. From vllm-project/vllm#38933 (Update batched_count_greater_than to handle batch size 1 without recompile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/vllm-project/vllm/pull/38933"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Sampler(nn.Module):
    """Computes logprob ranks: how many vocabulary entries score above the sampled token."""

    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 16)

    def forward(self, hidden: torch.Tensor, sampled: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(hidden)
        chosen = logits.gather(-1, sampled.unsqueeze(-1))
        return (logits > chosen).sum(-1)


def build() -> nn.Module:
    return Sampler()


ACTIVE_SEQUENCES = [6, 6, 5, 3, 1, 1, 4, 4]
"""Sequences still generating at each rollout step (prompts finish, the next group refills the batch)."""


def step(model: nn.Module, i: int) -> None:
    batch = ACTIVE_SEQUENCES[i]
    with torch.no_grad():
        model(torch.randn(batch, 8), torch.randint(0, 16, (batch,)))
