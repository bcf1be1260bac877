"""Static scan of every compiled region's hot path for Python state that makes Dynamo guard, recompile or break.

Starting from each target's method, the scan parses (once per code object) the source of every function the region
reaches: methods on `self`, submodules' `forward` (and `__call__` overrides), helpers in any module (with the objects
passed to them bound to their parameters), properties, forward hooks and pre-hooks, and the methods of objects held
as attributes, library code included. Names are resolved against the *real* objects (the module instances, the
function's globals, closure cells and defaults), so a finding says what the value is (`int`, `float`, tensor...), not
what it looks like. torch's own code is trusted and not parsed. Code that never runs compiled is skipped: under
`if not torch.compiler.is_compiling():` (whatever name it was imported under, in an `and`, through a local flag) and
after `if torch.compiler.is_compiling(): return`. Code behind Python state that is false now (`if self.training:` in
eval mode, a debug flag that is off) is scanned as *dormant*: reported (as a warning) only when the hot path or the
step turns that state on. Given the engine's `step`, the scan also reads what it writes between compiled calls
(`loop`).

The pieces, by concern: `resolve` (names and values on the real objects), `walk`, `access`, `locals` and `calls`
(the AST walk: control flow, reads and writes, locals, calls), `tensors` (which values are tensors), `flow` (what
changes between calls), `conditions` (what a test is worth under compile), `shapes` (sizes that change), `classify`
(writes -> hazards), `loop` and `arguments` (the step's side: its writes, what it passes compiled calls); `model`
holds the records.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.classify import (
    classify_writes,
    per_instance,
    per_instance_classes,
    per_instance_shapes,
    written_keys,
)
from contract.checks.hotpath.hooks import visit_hooks
from contract.checks.hotpath.loop import LoopWalker, empty_container, walk_step
from contract.checks.hotpath.loop_verdict import classify_loop, pinned_by_step
from contract.checks.hotpath.model import MISSING, SIZES, Hazard, ScanState
from contract.checks.hotpath.modes import mode_hazards
from contract.checks.hotpath.resolve import ENTRY
from contract.checks.hotpath.source import TRUSTED, parse_source
from contract.checks.hotpath.visit import visit_callable
from contract.checks.hotpath.walk import Walker


def scan(binding: Any, step: Any = None) -> list[Hazard]:
    """Scan the hot path of every enabled region of a binding (and, given the engine's `step`, what the loop changes
    between calls); returns raw hazards, deduplicated by location."""
    state = ScanState()
    regions = [rb for rb in binding.regions.values() if rb.region.enabled]
    for rb in regions:
        for target in rb.targets:
            state.targets.add((id(target.module), target.method))
            if target.method == "forward":
                for sub in target.module.modules():
                    state.hot_modules.setdefault(id(sub), rb.region.name)
    for rb in regions:
        for target in rb.targets:
            state.target = id(target.module)
            fn = getattr(type(target.module), target.method, None)
            visit_callable(state, fn, target.module, rb.region.name, call=ENTRY, walker=Walker)
            visit_hooks(state, target.module, rb.region.name, eager=LoopWalker if target.method == "forward" else None)
            instance_hazards(state, target.module, target.path, rb.region.name)
            implicit_reads(state, target.module, target.path, rb.region.name)
    if step is not None:
        walk_step(state, step, binding.model)
        state.hazards += mode_hazards(state)
    else:
        state.loop_resets |= {w.key for w in state.writes if w.form == "mutate" and owner_resets(w.owner, w.key[1])}
    dynamic = {rb.region.name for rb in regions if rb.region.dynamic is True or rb.region.dynamic_dims}
    state.hazards = [h for h in state.hazards if not (h.kind in SIZES and h.region in dynamic)]
    step_keys = frozenset(
        w.key for w in state.loop_writes if w.changing or w.literal is not MISSING and w.literal != w.value
    )
    state.hazards += classify_writes(state, step_keys, pinned_by_step(state))
    state.hazards += per_instance(state, binding) + per_instance_shapes(binding) + per_instance_classes(binding)
    state.hazards += classify_loop(state, {rb.region.name: rb.region.recompile_budget for rb in regions})
    flips = written_keys(state) | step_keys
    return _dedupe([h for h in state.hazards if not h.guard_keys or h.guard_keys & flips])


def owner_resets(owner: Any, name: str) -> bool:
    """Without the step: the owner's class has a method that empties the container (`def reset(self):
    self.taps.clear()`), the API its loop calls between steps; precision first, its growth is not reported."""
    for cls in type(owner).__mro__:
        if cls.__module__.split(".")[0] in TRUSTED:
            continue
        for attr, fn in vars(cls).items():
            if attr.startswith("__") or attr == "forward":
                continue  # construction and the hot path itself are not the loop's reset
            source = parse_source(fn) if isinstance(fn, types.FunctionType) else None
            if source is not None and any(empties(node, name) for node in ast.walk(source.node)):
                return True
    return False


def empties(node: ast.AST, name: str) -> bool:
    """`self.<name>.clear()`, `self.<name> = []` / `{}` / `list()`, `del self.<name>[:]`."""

    def is_attr(n: ast.AST) -> bool:
        return isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.value, ast.Name)

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clear":
        return is_attr(node.func.value)
    if isinstance(node, ast.Assign):
        return any(is_attr(t) for t in node.targets) and empty_container(node.value)
    if isinstance(node, ast.Delete):
        return any(isinstance(t, ast.Subscript) and is_attr(t.value) for t in node.targets)
    return False


def _dedupe(hazards: list[Hazard]) -> list[Hazard]:
    """One hazard per (kind, location); a certain one wins over a dormant or unresolved one at the same place, and
    growth by concatenation over the plain assignment it is."""
    grown = {h.where for h in hazards if h.kind == "grown"}
    seen: dict[tuple[str, str], Hazard] = {}
    for h in hazards:
        if h.where in grown and h.kind != "grown":
            continue
        key = (h.kind, h.where)
        if key not in seen or h.certain and not seen[key].certain:
            seen[key] = h
    return list(seen.values())


def instance_hazards(state: ScanState, module: nn.Module, path: str, region: str) -> None:
    """Hazards of torch's own modules: BatchNorm with `momentum=None` divides by a counter it reads as a Python value."""
    for name, sub in module.named_modules():
        if _torch_scan.is_batchnorm(sub) and sub.momentum is None and sub.track_running_stats and sub.training:
            where = ".".join(p for p in (path, name) if p) or "<root>"
            state.hazards.append(
                Hazard(kind="batchnorm", where=where, region=region, what=f"{type(sub).__name__}(momentum=None)")
            )


def implicit_reads(state: ScanState, module: nn.Module, path: str, region: str) -> None:
    """Python scalars torch's own modules read in forward (`self.training`, Dropout's `p`, LeakyReLU's
    `negative_slope`) and each parameter's `requires_grad`: Dynamo guards on them, so a step that changes one
    recompiles the region; torch's code is not parsed, the names its forward reads are enough."""
    for name, param in module.named_parameters():  # Dynamo guards each parameter's requires_grad
        where = ".".join(p for p in (path, name) if p)
        state.reads.setdefault((id(param), "requires_grad"), (where, region))
    for name, sub in module.named_modules():
        cls = type(sub)
        code = getattr(getattr(cls, "forward", None), "__code__", None)
        if cls.__module__.split(".")[0] != "torch" or code is None:
            continue
        where = ".".join(p for p in (path, name) if p) or "<root>"
        for attr in code.co_names:
            if attr == "training" or type(vars(sub).get(attr)) in (int, float, bool, str):
                state.reads.setdefault((id(sub), attr), (where, region))
