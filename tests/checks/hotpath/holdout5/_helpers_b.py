"""Library-style helpers for the holdout5 (B) cases: stand-ins for code that lives in another package.

Megatron-style parallel-state getters, a DeepSpeed-style module trace recorder, a vLLM-style lazy `envs` module
reader and a float8-style amax sync that the training loop calls between steps.
"""

from __future__ import annotations

import os
import warnings

import torch
from torch import nn

_TENSOR_MODEL_PARALLEL_GROUP: object = "tp-group-0"
"""Stand-in for Megatron's global tensor-parallel process group (set once by initialize_model_parallel)."""


def get_tensor_model_parallel_group() -> object:
    return _TENSOR_MODEL_PARALLEL_GROUP


def get_tensor_model_parallel_group_if_none(tp_group: object | None, is_expert: bool = False) -> object:
    """Megatron's deprecation shim: warn when a caller still relies on the global group, then fall back to it."""
    if tp_group is None:
        warnings.warn(
            "Passing tp_group=None is deprecated; pass the tensor-parallel group explicitly.",
            DeprecationWarning,
            stacklevel=2,
        )
        tp_group = get_tensor_model_parallel_group()
    return tp_group


@torch.compiler.disable
def record_module(coordinator: "TraceCoordinator", module: nn.Module) -> None:
    """DeepSpeed ZeRO-3 style: append the module to the parameter-fetch trace (kept out of compilation)."""
    coordinator.trace.append(id(module))
    if len(coordinator.trace) > 64:
        coordinator.trace.clear()


class TraceCoordinator:
    """A ZeRO-3 parameter coordinator stand-in: records which submodule ran at which trace step."""

    def __init__(self) -> None:
        self.trace: list[int] = []
        self.step_id = 0

    def record_step(self, module: nn.Module) -> None:
        """The compiled variant: bumps a Python step id and stores it on the module being fetched."""
        self.step_id += 1
        module.ds_step_id = self.step_id


def _env_bool(name: str, default: str = "0") -> bool:
    return os.environ.get(name, default) == "1"


class _Envs:
    """vLLM `envs.py` style: each attribute is a lambda evaluated on access, so every read hits os.environ."""

    _getters = {
        "VLLM_FUSED_RESIDUAL": lambda: _env_bool("VLLM_FUSED_RESIDUAL"),
    }

    def __getattr__(self, name: str) -> bool:
        if name in self._getters:
            return self._getters[name]()
        raise AttributeError(name)


envs = _Envs()


def sdpa_with_lse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, return_lse: bool = False):
    """A flex-attention-like wrapper: the old `return_lse` flag still works but warns that it is deprecated."""
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    lse = torch.logsumexp(scores, dim=-1)
    out = torch.softmax(scores, dim=-1) @ v
    if return_lse:
        warnings.warn("return_lse is deprecated, use return_aux=AuxRequest(lse=True)", FutureWarning, stacklevel=2)
        return out, lse
    return out, None


def sdpa_with_aux(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """The replacement API: always returns (out, aux) with aux.lse, no warning."""
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v, {"lse": torch.logsumexp(scores, dim=-1)}


@torch.no_grad()
def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    """float8 training style: called by the loop after each step; updates amax history buffers in place and
    owns the one-time initialisation flag, so forward never writes module attributes."""
    for module in model.modules():
        if hasattr(module, "fp8_amax_history"):
            module.fp8_amax_history.copy_(torch.roll(module.fp8_amax_history, 1))
            module.fp8_amax_history[0] = module.fp8_amax_current
            module.fp8_scale.copy_(448.0 / module.fp8_amax_history.max().clamp(min=1e-12))
            module.is_amax_initialized = True
