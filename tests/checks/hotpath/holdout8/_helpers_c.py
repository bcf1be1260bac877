"""Library-style stand-in for author C's cases: a serving engine's forward context (vllm.forward_context / sglang).

It holds the current batch at module level, as the real engines do, and is imported by the case modules.
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Iterator

import torch


# --- serving engine forward context (vllm.forward_context / sglang ForwardBatch) -----------------------------------


@dataclasses.dataclass
class ForwardBatch:
    """Per-step batch metadata prepared by the model runner / CUDA-graph runner."""

    batch_size: int
    forward_mode: str = "decode"
    seq_lens: torch.Tensor | None = None
    num_padded_tokens: torch.Tensor | None = None


_forward_context: ForwardBatch | None = None


@contextlib.contextmanager
def set_forward_context(batch: ForwardBatch) -> Iterator[None]:
    global _forward_context
    prev = _forward_context
    _forward_context = batch
    try:
        yield
    finally:
        _forward_context = prev


def get_forward_context() -> ForwardBatch:
    assert _forward_context is not None, "forward context is not set"
    return _forward_context
