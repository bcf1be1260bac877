"""Library-style helpers for the holdout3 cases h21+/c13+ (author B): the code a model calls "in another module".

Each helper mirrors, in miniature, the library object named in the case that uses it (a torchmetrics-style metric,
a Lightning-style result logger, a vLLM-style forward context, a torchtitan-style varlen metadata record, a
Float8-style delayed-scaling linear). Nothing here is compiled on its own.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import torch
from torch import nn

log = logging.getLogger("holdout3.helpers_b")


# --- torchmetrics-style metric (Lightning-AI/torchmetrics#1780) ------------------------------------------------------


class RunningMeanMetric:
    """A metric with torchmetrics' bookkeeping: `update` bumps a Python `_update_count` and clears the cache."""

    def __init__(self) -> None:
        self.total = torch.zeros(())
        self.count = torch.zeros(())
        self._update_count = 0
        self._computed: Optional[torch.Tensor] = None

    def update(self, value: torch.Tensor) -> None:
        self._computed = None
        self._update_count += 1
        self.total = self.total + value.detach().sum()
        self.count = self.count + value.numel()

    def compute(self) -> torch.Tensor:
        if self._computed is None:
            self._computed = self.total / self.count.clamp(min=1)
        return self._computed


class TensorStateMeanMetric(nn.Module):
    """The compile-friendly metric: all running state lives in registered buffers updated in place."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(()), persistent=False)
        self.register_buffer("count", torch.zeros(()), persistent=False)

    def update(self, value: torch.Tensor) -> None:
        self.total.add_(value.detach().sum())
        self.count.add_(value.numel())

    def compute(self) -> torch.Tensor:
        return self.total / self.count.clamp(min=1)


# --- Lightning-style result logging (Lightning-AI/pytorch-lightning#17177) -----------------------------------------


class ResultCollection:
    """What `LightningModule.log` feeds: a dict of results plus a debug line through the std logger."""

    def __init__(self) -> None:
        self.results: dict[str, torch.Tensor] = {}

    def log(self, name: str, value: torch.Tensor, on_step: bool = True) -> None:
        log.debug("logging %s on_step=%s", name, on_step)
        self.results[name] = value.detach()


def rank_zero_log_metrics(logger_state: dict[str, Any], metrics: dict[str, torch.Tensor], step: int) -> None:
    """Eager-side logging helper (runs outside any compiled region)."""
    logger_state[step] = {k: float(v) for k, v in metrics.items()}


# --- vLLM-style forward context (vllm-project/vllm#8821) -----------------------------------------------------------


@dataclass
class DecodeMetadata:
    num_decode_tokens: int
    max_decode_seq_len: int
    seq_lens: Optional[torch.Tensor] = None


@dataclass
class ForwardContext:
    attn_metadata: Optional[DecodeMetadata] = None


_forward_context = ForwardContext()


def get_forward_context() -> ForwardContext:
    return _forward_context


@contextmanager
def set_forward_context(attn_metadata: DecodeMetadata) -> Iterator[None]:
    previous = _forward_context.attn_metadata
    _forward_context.attn_metadata = attn_metadata
    try:
        yield
    finally:
        _forward_context.attn_metadata = previous


# --- torchtitan-style varlen metadata (pytorch/torchtitan#2823) ----------------------------------------------------


@dataclass
class VarlenMetadata:
    cu_seqlens: torch.Tensor
    max_q: torch.Tensor  # 0-dim tensor after the fix; an int before it


def create_varlen_metadata(doc_lens: torch.Tensor) -> VarlenMetadata:
    cu = torch.zeros(doc_lens.numel() + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(doc_lens, 0)
    return VarlenMetadata(cu_seqlens=cu, max_q=doc_lens.max())


# --- Float8-style delayed scaling (meta-pytorch/float8_experimental#211, now pytorch/ao float8) ---------------------


class DelayedScalingLinear(nn.Linear):
    """A Linear with float8-style amax history and a Python flag the training loop's sync step flips."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self.register_buffer("amax_history", torch.zeros(16))
        self.register_buffer("scale", torch.ones(()))
        self.amax_and_scale_synced = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.amax_and_scale_synced:
            # reference code raises here unless amax_init is on; the loop always syncs first
            self.scale.fill_(1.0)
        amax = x.abs().max()
        self.amax_history.copy_(torch.roll(self.amax_history, 1))
        self.amax_history[0] = amax
        self.amax_and_scale_synced = False
        return nn.functional.linear(x * self.scale, self.weight, self.bias)


def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    """Called by the training loop after each optimizer step."""
    for child in model.modules():
        if isinstance(child, DelayedScalingLinear):
            child.scale.copy_(448.0 / child.amax_history.max().clamp(min=1e-12))
            child.amax_and_scale_synced = True
