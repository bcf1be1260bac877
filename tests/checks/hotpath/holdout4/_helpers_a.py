"""Library-style helpers that live in another module than the cases that use them (holdout4, author A)."""

from __future__ import annotations

import functools

import torch
from torch import nn


@functools.lru_cache
def is_torch_version(operation: str, version: str) -> bool:
    """diffusers-style version check, memoised with lru_cache (diffusers.utils.import_utils.is_torch_version)."""
    current = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    wanted = tuple(int(part) for part in version.split(".")[:2])
    if operation == ">=":
        return current >= wanted
    if operation == "<":
        return current < wanted
    raise ValueError(f"unsupported operation {operation!r}")


@torch._dynamo.disable()
def _fetch_partitioned(tensor: torch.Tensor) -> torch.Tensor:
    """Stand-in for a ZeRO-3 style parameter/activation fetch that must run eagerly (not traceable)."""
    return tensor.sin()


def offload_post_hook(module: nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> torch.Tensor:
    """DeepSpeed-style forward hook: hands the output through an eager-only partition helper."""
    return _fetch_partitioned(output).add(1)


def install_offload_hooks(model: nn.Module) -> None:
    """Registers the post-forward hook on the model and each of its direct children, as the offload engine does."""
    model.register_forward_hook(offload_post_hook)
    for child in model.children():
        child.register_forward_hook(offload_post_hook)
