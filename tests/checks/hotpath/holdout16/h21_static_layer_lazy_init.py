"""Hazard: the static KV-cache layer allocates its key/value tensors lazily on the first `update`, inside the compiled decoder forward: `if not self.is_initialized: self.lazy_initialization(key_states)` re-assigns `is_initialized = True` (and the tensors) from inside the region, so the second decode step fails the guard on the flag and Dynamo compiles the forward again. From huggingface/transformers#42467 (StaticLayer "lazily allocates its full backing tensors ... one can call `early_initialization(...)` ahead-of-time", the path export and compile need)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import StaticCache, TinyCausalLM

LABEL = "assigned"
SOURCE = "https://github.com/huggingface/transformers/pull/42467"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Generator(nn.Module):
    """Wraps the LM and owns the cache, like `model.generate(..., cache_implementation="static")`."""

    def __init__(self) -> None:
        super().__init__()
        self.model = TinyCausalLM(max_len=16)
        self.cache = StaticCache(num_layers=2, max_cache_len=16)  # nothing allocated yet

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, self.cache, cache_position)


def build() -> nn.Module:
    return Generator().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    token = torch.tensor([[i % 16]])
    logits = model(token, torch.tensor([i]))
    logits.argmax(-1)
