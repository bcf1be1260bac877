"""Regions the step calls that Dynamo never compiled (CC409's evidence): they ran eager with no compile and no
graph-break record, which neither of the monitor's counts shows (a generator forward, an active TorchDispatchMode).

Learned after the probe's steps, only for enabled regions with no compile event: the last step runs once more with
every region forced eager (`torch.compiler.set_stance("force_eager")`, so nothing is traced and no guard sees the
counter) while a counter wraps those regions' calls and notes the dispatch modes active at each. A region is left
out when its code may have run compiled without a compile of its own: inside another compiled region (inlined
there, CC504), or sharing its method with a region that compiled (Dynamo's cache entry serves both).
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import torch

from contract import _torch
from contract.binding.apply import set_call
from contract.binding.targets import Binding, Target, inside


def never_compiled(binding: Binding, step: Callable, compiled: set[str], last_step: int) -> dict[str, tuple[str, str]]:
    """Region -> (why, fix) of its calls running eager, for enabled regions the step calls that never compiled in
    the probe."""
    codes = {_code(t) for t in binding.targets() if t.region in compiled}
    quiet = [t for t in binding.targets() if t.region not in compiled and _alone(binding, t, codes)]
    if not quiet or last_step < 0:
        return {}
    calls = _calls(binding, quiet, step, last_step)
    return {region: _cause(binding, region, modes) for region, modes in calls.items()}


def _alone(binding: Binding, target: Target, compiled_codes: set[Any]) -> bool:
    """An enabled region's target whose code could only have run compiled through a compile of its own."""
    if not binding.regions[target.region].region.enabled or _code(target) in compiled_codes:
        return False
    return not any(
        t.region != target.region and t.method == "forward" and inside(target.path, t.path)
        for t in binding.targets()
        if binding.regions[t.region].region.enabled
    )


def _method(target: Target) -> Any:
    """The target's own method, unwrapped (the instance's when it had one, else the class's)."""
    fn = target.instance_attr if target.instance_attr is not None else getattr(type(target.module), target.method, None)
    return inspect.unwrap(fn) if callable(fn) else fn


def _code(target: Target) -> Any:
    return getattr(_method(target), "__code__", None)


def _calls(binding: Binding, targets: list[Target], step: Callable, index: int) -> dict[str, list[list[str]]]:
    """Region -> the dispatch modes active at each of its calls in one more run of step `index`, all regions eager."""
    seen: dict[str, list[list[str]]] = defaultdict(list)
    for t in targets:
        set_call(t, _counting(t.compiled or getattr(t.module, t.method), seen[t.region]))
    try:
        with torch.compiler.set_stance("force_eager"):
            step(binding.model, index)
    except Exception:  # the step fails eager too: no evidence either way (CC405 reports a step that raises)
        return {}
    finally:
        for t in targets:
            set_call(t, t.compiled)
    return {region: modes for region, modes in seen.items() if modes}


def _counting(fn: Callable, calls: list[list[str]]) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(_torch.active_dispatch_modes())
        return fn(*args, **kwargs)

    return call


def _cause(binding: Binding, region: str, calls: list[list[str]]) -> tuple[str, str]:
    """Why Dynamo left the region's frames alone, as far as the call site shows, and what to do."""
    modes = sorted({m for modes in calls for m in modes})
    if modes:
        return (
            f"a TorchDispatchMode was active at its calls ({', '.join(modes)}): Dynamo runs compiled code eager "
            "under one",
            "enter the mode outside the steps you want compiled (measure FLOPs once, or on untimed steps)",
        )
    methods = [_method(t) for t in binding.regions[region].targets]
    if any(inspect.isgeneratorfunction(m) or inspect.isasyncgenfunction(m) for m in methods):
        return (
            "its method is a generator (it yields): Dynamo skips frames that yield",
            "compile the per-chunk method the generator calls, or return tensors instead of yielding them",
        )
    return (
        "Dynamo skipped its frames without a record",
        "run with TORCH_LOGS=+dynamo to see why Dynamo skips its frames, or keep the region eager "
        "(enabled = false with a reason)",
    )
