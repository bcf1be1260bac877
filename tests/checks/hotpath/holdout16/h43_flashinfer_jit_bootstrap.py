"""Hazard: the spec-decode sampler is compiled and inlines the plain-Python FlashInfer op wrapper, which reaches its kernel through `get_sampling_module()`, a `functools.cache`-wrapped lazy JIT bootstrap in a helper module; Dynamo traces through the cache wrapper into the bootstrap body, hits untraceable builtins (`posix.stat` from the AOT-library check, `datetime.now`) and breaks the graph on every compiled call. From NVIDIA/TensorRT-LLM#16732 (make FlashInfer sampling op wrappers opaque to Dynamo: each untraceable builtin is "a permanent graph break" and the bootstrap re-executes eagerly on every call)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import flashinfer_renorm_probs

LABEL = "helper-module"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/pull/16732"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class SpecDecSampler(nn.Module):
    """Draft-model head plus temperature / top-p sampling through the FlashInfer op wrapper."""

    def __init__(self, dim: int = 8, vocab: int = 16) -> None:
        super().__init__()
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, hidden: torch.Tensor, temperatures: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
        logits = self.lm_head(hidden) / temperatures.unsqueeze(-1)
        probs = flashinfer_renorm_probs(logits.softmax(-1), top_p)
        return probs.argmax(-1)


def build() -> nn.Module:
    return SpecDecSampler()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.full((4,), 0.7), torch.full((4,), 0.9))
