"""CC3xx findings from the static scan: each raw hazard becomes one finding of its rule (see `rules`)."""

from __future__ import annotations

from typing import Any

from contract.checks.context import CheckContext
from contract.checks.hotpath import versions
from contract.checks.hotpath.model import SIZES
from contract.checks.hotpath.rules import (
    ASSIGNED,
    BATCHNORM,
    COUNTER,
    DYNAMIC_GETATTR,
    DYNAMIC_SHAPE,
    ENV_READ,
    FLOAT_STATE,
    GRAPH_BREAK_CALL,
    ITEM_BRANCH,
    LATE_HOOK,
    LOOP_MUTATED,
    PER_INSTANCE,
)
from contract.checks.probe.check import observed, stable_regions
from contract.findings import Finding, Severity

_BY_KIND = {
    "counter": COUNTER,
    "assigned": ASSIGNED,
    "container": ASSIGNED,
    "grown": ASSIGNED,
    "float": FLOAT_STATE,
    "graph-break": GRAPH_BREAK_CALL,
    "item-branch": ITEM_BRANCH,
    "env": ENV_READ,
    "dynamic-getattr": DYNAMIC_GETATTR,
    "batchnorm": BATCHNORM,
    "per-instance": PER_INSTANCE,
    "per-instance-shape": PER_INSTANCE,
    "per-instance-class": PER_INSTANCE,
    "loop": LOOP_MUTATED,
    "loop-may": LOOP_MUTATED,
    "loop-arg": LOOP_MUTATED,
    "loop-none": LOOP_MUTATED,
    "loop-mode": LOOP_MUTATED,
    "loop-shape": LOOP_MUTATED,
    "loop-length": LOOP_MUTATED,
    "late-hook": LATE_HOOK,
    "dynamic-shape": DYNAMIC_SHAPE,
}

_MESSAGES = {
    "counter": (
        "{what} is read and rewritten on the hot path of region {region!r}: Dynamo guards on its value and "
        "recompiles every time it changes",
        "keep it in a buffer (register_buffer, persistent=False) updated in place under torch.no_grad(), or "
        "update it outside the compiled method",
    ),
    "assigned": (
        "{what} is assigned and read on the hot path of region {region!r}: each new value is a recompile",
        "compute it as a local, set it once in __init__, or keep it in a buffer",
    ),
    "container": (
        "{what} is mutated on the hot path of region {region!r}: Dynamo guards on its length (a dict's "
        "keys) and recompiles whenever it changes between calls",
        "keep the bookkeeping outside the compiled method, or use a preallocated tensor buffer",
    ),
    "grown": (
        "{what} grows by concatenation on the hot path of region {region!r}: its size changes on every call, a "
        "recompile (then a dynamic size; one graph per size with dynamic = false)",
        "preallocate a fixed-size buffer written at a position tensor (a static KV cache), or declare the "
        "dimension dynamic",
    ),
    "float": (
        "{what} is updated on the hot path of region {region!r}: a float specializes under some configs "
        "(Dropout.p always) and recompiles per value",
        "keep it in a 0-d tensor buffer updated in place, or pass it as an argument",
    ),
    "graph-break": (
        "{what} on the hot path of region {region!r} breaks the graph every call",
        "move it out of the compiled method or under `if not torch.compiler.is_compiling():`",
    ),
    "item-branch": (
        "{what} on the hot path of region {region!r}: data-dependent control flow breaks the graph",
        "use tensor ops (torch.where, masking) or torch.cond instead of Python branching",
    ),
    "env": (
        "{what} on the hot path of region {region!r}: Dynamo guards on the environment value",
        "read the variable once in __init__ or the engine config",
    ),
    "dynamic-getattr": (
        "{what} with a computed name on the hot path of region {region!r}: one compile per name",
        "use an nn.ModuleDict and one region per alternative, or a constant name",
    ),
    "batchnorm": (
        "{what} in training mode in region {region!r} reads a counter as a Python float: a graph break every step",
        "set a fixed momentum (e.g. 0.1) or keep the module out of the compiled region",
    ),
    "per-instance": (
        "{what} is read by the instances of region {region!r}: they share one compiled code object and each "
        "value is its own specialization (one compile per value; past the recompile limit the rest run eager)",
        "compile the parent module once, pass the value as an argument, or raise the region's recompile_limit",
    ),
    "per-instance-shape": (
        "{what} differ between the instances of region {region!r}: they share one compiled code object and Dynamo "
        "keeps parameter shapes static, so each distinct set is one more compile (past the recompile limit the "
        "rest run eager)",
        "give the instances one shape (one quantization type per layer), compile the parent module once, or raise "
        "the region's recompile_limit",
    ),
    "per-instance-class": (
        "{what} differs between the instances of region {region!r}: they share one compiled code object and Dynamo "
        "guards the type of `self`, so each class is one more compile (past the recompile limit the rest run eager)",
        "give each class its own forward, compile the parent module once, or raise the region's recompile_limit",
    ),
    "loop": (
        "{what} is read on the hot path of region {region!r} and the step changes it between calls, every step: "
        "Dynamo guards on its value and recompiles for each value, more than the region's recompile budget allows",
        "pass the value as a tensor argument (or keep it in a buffer updated in place), or stop changing it "
        "between compiled calls",
    ),
    "loop-may": (
        "{what} is read on the hot path of region {region!r} and the step may change it between calls: each new "
        "value is a recompile",
        "pass the value as a tensor argument (or keep it in a buffer updated in place), or set it once before "
        "the first compiled call",
    ),
    "loop-arg": (
        "the step passes {what} to region {region!r}, a Python number, flag or string that changes between calls: "
        "Dynamo specializes on it and recompiles (a number once before it turns dynamic; a string, or any value "
        "where dynamic shapes are off, on every new value)",
        "pass numbers as 0-d tensors (torch.tensor(value)) and strings as token tensors, or keep them constant",
    ),
    "loop-none": (
        "the step passes {what} to region {region!r}: Dynamo guards on whether an argument is None, so the calls "
        "with and without it compile one graph each",
        "pass the same kind of value at every call (a neutral tensor: all-ones mask, top_k = vocab size), or call "
        "the region on one path only",
    ),
    "loop-mode": (
        "the step calls region {region!r} {what}: Dynamo guards on grad mode, autocast and each input's "
        "requires_grad, so it compiles one graph per mode (a recompile the first time each mode is seen)",
        "call the region under one mode (or compile the evaluation path as its own region), or allow the recompile "
        "in the region's recompile_budget",
    ),
    "loop-shape": (
        "the step passes {what} to region {region!r}, a tensor whose size changes between calls: Dynamo recompiles "
        "for the first new shape, then compiles a dynamic graph (with dynamic = false, one graph per shape)",
        "mark the dimension dynamic before the first call (the region's dynamic_dims, or dynamic = true), or pad "
        "inputs to a few fixed sizes",
    ),
    "loop-length": (
        "the step passes {what} to region {region!r}, a list whose length changes between calls: Dynamo guards a "
        "list's length (and unrolls loops over it), so each new length compiles another graph",
        "stack the items in one tensor padded to a fixed count (with zero masks for the unused ones), or keep the "
        "count fixed",
    ),
    "late-hook": (
        "the step registers a forward hook on {what} inside region {region!r} after it was compiled: Dynamo "
        "recompiles for it (and again for every hook added later)",
        "register hooks before the contract is applied (before the first compiled call)",
    ),
    "dynamic-shape": (
        "{what} on the hot path of region {region!r}: its output shape depends on tensor values, so the graph "
        "breaks there every call",
        "keep shapes static (torch.where(mask, x, 0), masked_fill, padding), or turn on "
        "capture_dynamic_output_shape_ops and budget the dynamic shape",
    ),
}


_DORMANT = {
    "counter": (
        "{what} is read and rewritten behind {guard} on the hot path of region {region!r}: not traced now, "
        "but once that flag is on (flips) Dynamo recompiles every call"
    ),
}
"""Messages for hazards in code that Python state keeps from running compiled now (a warning)."""


_REFUTED = (
    "the probe ran the step {steps} times and region {region!r} never recompiled: Dynamo did not guard on it on "
    "this torch; a warning until a longer run shows it"
)
"""Note on a certain hazard the probe's run contradicts (it stays a warning: the probe's inputs may not reach it)."""


def finding(hazard: Any, refuted_after: int = 0) -> Finding:
    """The finding for one scan hazard; unresolved or dormant counters, hazards the probe's run refutes
    (`refuted_after` steps without a recompile in its region), and patterns measured harmless on the installed torch
    (`versions`: the note names the versions where they are not) are warnings."""
    rule = _BY_KIND[hazard.kind]
    message, fix = _MESSAGES[hazard.kind]
    guard = getattr(hazard, "guard", "")
    if guard:
        message = _DORMANT.get(hazard.kind, message + " (reached only once {guard} changes)")
    on_torch = on_installed_torch(hazard)
    weaker = refuted_after or on_torch is not None and on_torch.lowered
    severity: Severity | None = None if hazard.certain and not weaker else "warning"
    text = message.format(what=hazard.what, region=hazard.region, guard=guard)
    notes = [getattr(hazard, "note", ""), on_torch.note if on_torch else ""]
    if refuted_after and hazard.certain and rule.severity == "error":
        notes.append(_REFUTED.format(steps=refuted_after, region=hazard.region))
    note = "; ".join(n for n in notes if n)
    return rule.finding(hazard.where, f"{text} ({note})" if note else text, fix, severity=severity)


def on_installed_torch(hazard: Any) -> versions.Verdict | None:
    """What the installed torch was measured to do with the hazard's pattern (None: not a pattern measured per
    torch minor, the rule's description holds)."""
    pattern = getattr(hazard, "pattern", "")
    return versions.verdict(pattern) if pattern else None


def check(ctx: CheckContext) -> list[Finding]:
    """Scan every enabled region's hot path and, given the step, what it changes between calls (needs a binding;
    the scan calls neither the model nor the step). A certain recompile hazard in a region the probe ran stable is
    lowered to a warning, and a size the step changes is left to the probe's own findings: the probe's evidence
    outranks the scan's reading (precision before recall)."""
    if ctx.binding is None:
        return []
    hazards = accepted_breaks([h for h in scanned(ctx) if h.kind in _BY_KIND and reported(h)], ctx.binding)
    if any(h.kind in SIZES for h in hazards) and ran(observed(ctx)):
        hazards = [h for h in hazards if h.kind not in SIZES]  # the probe measured them: CC406 or CC401 say it
    if not any(h.certain and _BY_KIND[h.kind].severity == "error" and not lowered(h) for h in hazards):
        return [finding(h) for h in hazards]
    result = observed(ctx)
    stable = stable_regions(result)
    return [finding(h, result.steps if result and h.region in stable else 0) for h in hazards]


def reported(hazard: Any) -> bool:
    """False for a pattern measured harmless on every torch minor (`versions`)."""
    on_torch = on_installed_torch(hazard)
    return on_torch is None or on_torch.report


def lowered(hazard: Any) -> bool:
    """A pattern measured harmless on the installed torch: a warning whatever the probe sees."""
    on_torch = on_installed_torch(hazard)
    return on_torch is not None and on_torch.lowered


def scanned(ctx: CheckContext) -> list[Any]:
    """The static scan's raw hazards on this context (needs a binding), scanned once: CC3xx turn them into findings
    and CC601 reads the custom operators the hot path calls (`custom-op`)."""
    if "scan" not in ctx.evidence:
        from contract.checks.hotpath.scan import scan

        ctx.evidence["scan"] = scan(ctx.binding, ctx.step)
    return ctx.evidence["scan"]


def ran(result: Any) -> bool:
    """The probe ran the step at least twice without failing: a size the step changes showed in its recompiles."""
    return result is not None and not result.error and result.steps >= 2


_BREAKS = ("graph-break", "item-branch", "dynamic-shape")
"""Hazards that are one graph-break site each (CC304, CC305, CC312)."""


def accepted_breaks(hazards: list[Any], binding: Any) -> list[Any]:
    """Drop a region's graph-break sites when its `graph_break_budget` accepts that many (a contract that budgets
    them, as `init` writes it after seeing them, has made the call); more sites than the budget are all reported."""
    sites: dict[str, set[str]] = {}
    for h in hazards:
        if h.kind in _BREAKS:
            sites.setdefault(h.region, set()).add(h.where)
    accepted = {
        region
        for region, where in sites.items()
        if region in binding.regions and len(where) <= binding.regions[region].region.graph_break_budget
    }
    return [h for h in hazards if not (h.kind in _BREAKS and h.region in accepted)]
