"""Clean: the fix from foundation-model-stack/foundation-model-stack#353: before each compiled decode step `generate()` marks the sequence dimension of every cached key/value as dynamic, so the growing cache is traced once with a symbolic length (prefill ran eagerly when the prompt was cached)."""
from __future__ import annotations

import torch
import torch._dynamo
from torch import nn

from tests.checks.hotpath.holdout14.h01_fms_generate_growing_kv import LLaMA

LABEL = None
SOURCE = "https://github.com/foundation-model-stack/foundation-model-stack/pull/353"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

_state: dict = {}


def build() -> nn.Module:
    model = LLaMA()
    with torch.no_grad():  # prompt prefill, cached before the decode loop starts (eager)
        logits, _state["kv"] = model(torch.tensor([[1, 5, 7, 2]]), None, use_cache=True)
    _state["next"] = logits[:, -1:, :].argmax(dim=-1)
    return model


def step(model: nn.Module, i: int) -> None:
    """One decode step of generate(dynamic_cache=True)."""
    for k, v in _state["kv"]:
        torch._dynamo.mark_dynamic(k, 1)
        torch._dynamo.mark_dynamic(v, 1)
    with torch.no_grad():
        logits, _state["kv"] = model(_state["next"], _state["kv"], use_cache=True)
    _state["next"] = logits[:, -1:, :].argmax(dim=-1)
