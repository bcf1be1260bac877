"""Clean: the same compiled spec-decode sampler, but the FlashInfer op wrapper is registered as a `torch.library.custom_op` with a fake implementation, so Dynamo records one opaque op and never enters the `functools.cache` JIT bootstrap (os.stat, datetime.now) behind it; one graph, no break. The fix of NVIDIA/TensorRT-LLM#16732 (make the FlashInfer sampling op wrappers opaque to Dynamo)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import renorm_probs_op

LABEL = None
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/pull/16732"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SpecDecSampler(nn.Module):
    """Draft-model head plus temperature / top-p sampling through the custom-op wrapper."""

    def __init__(self, dim: int = 8, vocab: int = 16) -> None:
        super().__init__()
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, hidden: torch.Tensor, temperatures: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(hidden) / temperatures.unsqueeze(-1)
        probs = renorm_probs_op(logits.softmax(-1), top_p)
        return probs.argmax(-1)


def build() -> nn.Module:
    return SpecDecSampler()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.full((4,), 0.7), torch.full((4,), 0.9))
