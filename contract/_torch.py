"""Adapter for the few private torch APIs the startup side needs (torch 2.11 and 2.13).

Why private: `nn.Module.compile()` keeps the compiled callable in `_compiled_call_impl`, and the only way to switch
a module back to eager in place (keeping its identity and state_dict keys) is to reset that attribute. Marking
argument dims dynamic uses `torch._dynamo.maybe_mark_dynamic`, which is documented but lives under `_dynamo`.
Both exist unchanged in torch 2.11 through 2.13.
"""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn


def set_forward_call(module: nn.Module, fn: Callable | None) -> None:
    """Make `module(...)` run `fn` (None: the plain eager `_call_impl`)."""
    module._compiled_call_impl = fn


def forward_call(module: nn.Module) -> Callable | None:
    """What `module(...)` runs instead of eager, if anything."""
    return module._compiled_call_impl


def mark_dynamic(value: Any, dims: tuple[int, ...]) -> None:
    """Mark dims of a tensor argument dynamic before Dynamo sees it (dims beyond its rank are skipped)."""
    if isinstance(value, torch.Tensor):
        for d in dims:
            if d < value.dim():
                torch._dynamo.maybe_mark_dynamic(value, d)


def supports_compile_kwarg(name: str) -> bool:
    """Whether this torch's `torch.compile` accepts a keyword (e.g. `recompile_limit`, new in 2.13)."""
    import inspect

    return name in inspect.signature(torch.compile).parameters
