"""Grad mode and autocast around the step's compiled calls: Dynamo guards on both, so a region the step calls under
two modes (training with grad, a periodic evaluation under `torch.no_grad()`; autocast on for some steps) compiles
one graph per mode. The loop walker keeps the modes of the `with` blocks it is in (`ScanState.modes`, callers
included) and records each compiled call's mode; a region seen under two modes, or under a mode the step flips
(`torch.set_grad_enabled(i % 4 != 0)`), is one hazard. So is a region called with inputs the step made require grad
(`real.requires_grad_()` for a gradient penalty) and without."""

from __future__ import annotations

import ast
from typing import Any

import torch

from contract.checks.hotpath.flow import change
from contract.checks.hotpath.model import Hazard, ScanState
from contract.checks.hotpath.resolve import Env, resolve

CHANGING = "changing"
"""A mode whose value the step computes from what changes between calls."""
DEFAULTS = {"grad": "with grad", "autocast": "autocast off"}
"""The mode of a call under no `with` block."""
INPUTS_GRAD = "inputs made to require grad"
"""A call given an input the step called `requires_grad_()` on."""


def _autocast_classes() -> tuple[Any, ...]:
    """`torch.autocast` and its aliases (`torch.amp.autocast`, the device-specific ones where they exist)."""
    found = [torch.autocast, getattr(torch.amp, "autocast", None)]
    return tuple(c for c in found if c is not None)


def mode_of(env: Env, expr: ast.expr) -> tuple[str, str] | None:
    """("grad" | "autocast", its value) for a context manager that sets one, else None (unknown values too)."""
    if not isinstance(expr, ast.Call):
        return None
    fn = resolve(env, expr.func)
    if fn is torch.no_grad:
        return ("grad", "under no_grad")
    if fn is torch.inference_mode:
        return ("grad", "under inference_mode") if not expr.args else _flag(env, expr.args[0], "grad", "inference")
    if fn is torch.enable_grad:
        return ("grad", "with grad")
    if fn is torch.set_grad_enabled and expr.args:
        return _flag(env, expr.args[0], "grad", "grad")
    if any(fn is c for c in _autocast_classes()):
        enabled = next((k.value for k in expr.keywords if k.arg == "enabled"), None)
        if enabled is not None:
            return _flag(env, enabled, "autocast", "autocast")
        dtype = next((k.value for k in expr.keywords if k.arg == "dtype"), None)
        return ("autocast", f"autocast {ast.unparse(dtype)}" if dtype is not None else "autocast on")
    return None


def _flag(env: Env, node: ast.expr, kind: str, name: str) -> tuple[str, str] | None:
    """A mode set from a flag: constant on/off, changing when the step computes it from `i`, else unknown."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        if kind == "grad" and name == "grad":
            return (kind, "with grad" if node.value else "under no_grad")
        return (kind, f"{name} on" if node.value else f"{name} off")
    return (kind, CHANGING) if change(env, node) is not None else None


def record_call(state: ScanState, region: str, code: Any, where: str, inputs_require_grad: bool = False) -> None:
    """Remember the grad/autocast mode a compiled call of `region` runs under (see `ScanState.modes`), and whether the
    step made one of its inputs require grad (Dynamo guards each input's `requires_grad` too). Modes are kept per
    compiled code object: two classes in one region compile apart and never see each other's modes."""
    current = dict(DEFAULTS)
    for kind, value in state.modes:
        current[kind] = value
    key = (current["grad"], current["autocast"], INPUTS_GRAD if inputs_require_grad else "")
    state.call_modes.setdefault((region, id(code)), {}).setdefault(key, where)


def mode_hazards(state: ScanState) -> list[Hazard]:
    """One hazard per region the step calls under more than one grad/autocast mode, or under one it flips."""
    out = []
    for (region, _), seen in state.call_modes.items():
        flipped = [where for key, where in seen.items() if CHANGING in key]
        if flipped:
            what = "under a grad or autocast mode it flips between calls"
        elif len(seen) > 1:
            what = " and ".join(f"{_label(key)} ({where})" for key, where in seen.items())
        else:
            continue
        where = flipped[0] if flipped else next(iter(seen.values()))
        out.append(Hazard(kind="loop-mode", where=where, region=region, what=what, certain=False))
    return out


def _label(key: tuple[str, ...]) -> str:
    """`under no_grad`, `with grad, autocast torch.bfloat16`, `with grad, inputs made to require grad`."""
    grad, autocast, inputs = key
    return ", ".join(p for p in (grad, "" if autocast == DEFAULTS["autocast"] else autocast, inputs) if p)
