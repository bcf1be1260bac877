"""Record what the step does under the contract: apply it with its real settings, start the runtime monitor (no port,
a private registry, a logger that keeps every event), run the step, and read the compiles, recompiles and graph
breaks of each region instance, tagged with the step they happened in. The model is put back afterwards.

What the recording sets (docs/start/adoption.md): a region has *settled* at its first step after step 0 in
which none of its instances compiled; its warm-up is every step before that (only step 0 when it never settled).
`warmup_compiles` is the most compiles one instance made in warm-up; `recompile_budget` is the most recompiles of one
instance the monitor would count with that allowance (0 when none after warm-up); `graph_break_budget` is the most
distinct break sites of one instance. A run of the same step under those values breaches nothing.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from contract import _torch
from contract.binding.apply import apply, unapply
from contract.binding.resolve import bind, parameters
from contract.document.load import Contract
from contract.observe import Recorder, observer, relaxed

_SIZE_GUARD = re.compile(r"tensor '(?:L\[')?([A-Za-z_]\w*(?:\[\d+\])?)(?:'\])?' size mismatch at index (\d+)")
_POSITIONAL = re.compile(r"^args\[(\d+)\]$")


class StepError(Exception):
    """The step (or applying the contract) raised while recording: one line, located."""


@dataclass(frozen=True, kw_only=True)
class Compile:
    """One compile the monitor attributed to a region instance."""

    step: int
    path: str
    compile_id: str
    seconds: float
    recompile: bool


@dataclass(kw_only=True)
class RegionRecord:
    """Everything the monitor reported for one region."""

    name: str
    compiles: list[Compile] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    """Guard texts of the recompiles, in order."""
    guard_sites: list[str] = field(default_factory=list)
    """The user `file:line` of each failed guard when the monitor names it ("" otherwise), parallel to `guards`."""
    generalizing: int = 0
    """Recompiles the monitor marked as Dynamo generalizing a size or float (newer monitors only)."""
    breaks: dict[tuple[str, str], str] = field(default_factory=dict)
    """(site `file:line`, reason's first line) -> reason, for each distinct break."""
    break_sites: int = 0
    """Distinct break sites of the worst instance (the monitor's own count, what `graph_break_budget` bounds)."""
    limit_hits: int = 0
    dims: dict[str, set[int]] = field(default_factory=dict)
    """Argument -> dims whose size changed in a recompile (a `dynamic_dims` suggestion)."""


@dataclass(kw_only=True)
class Recording:
    """A recorded run of the step."""

    step_ref: str
    steps: int
    backend: str
    regions: dict[str, RegionRecord]


def settled_at(rec: RegionRecord, steps: int) -> int | None:
    """The first step after step 0 in which the region compiled nothing (None: it compiled in every step)."""
    busy = {c.step for c in rec.compiles}
    return next((s for s in range(1, steps) if s not in busy), None)


def warmup_compiles(rec: RegionRecord, steps: int) -> int:
    """The most compiles one instance made before the region settled (step 0 alone when it never did); at least 1."""
    end = settled_at(rec, steps) or 1
    per: dict[str, int] = {}
    for c in rec.compiles:
        if c.step < end:
            per[c.path] = per.get(c.path, 0) + 1
    return max([1, *per.values()])


def counted(rec: RegionRecord, warmup: int) -> int:
    """The most recompiles of one instance the monitor counts with `warmup_compiles = warmup` (no `mark_warm()`)."""
    seen: dict[str, int] = {}
    out: dict[str, int] = {}
    for c in rec.compiles:
        seen[c.path] = seen.get(c.path, 0) + 1
        if c.recompile and seen[c.path] > warmup:
            out[c.path] = out.get(c.path, 0) + 1
    return max([0, *out.values()])


def guard_text(rec: RegionRecord, index: int, limit: int = 160) -> str:
    """One recompile's guard, short (Dynamo's hint and user stack dropped), with its user `file:line` when known."""
    if not rec.guards:
        return "(none reported)"
    text = rec.guards[index].split(" (HINT")[0].split(" User stack trace:")[0]
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    site = rec.guard_sites[index]  # appended together with the guard
    return f"{text} at {site}" if site else text


def compiled_late(rec: RegionRecord, steps: int) -> bool:
    """Whether the region still compiled in the last recorded step (the run cannot show it stable)."""
    return steps > 1 and any(c.step == steps - 1 for c in rec.compiles)


def record(contract: Contract, model: nn.Module, step: Callable, *, steps: int, step_ref: str) -> Recording:
    """Run `steps` calls of `step(model, i)` under the contract and the monitor; the model is restored afterwards."""
    import torch

    from contract.checks.probe.restore import restore, snapshot

    binding, _ = bind(relaxed(contract, unlimited=True), model)
    config, saved = _torch.dynamo_config(), snapshot(model)
    events = Recorder()
    torch.compiler.reset()
    try:
        _apply(binding)
        with observer(binding, events) as mon:
            _run(events, model, step, steps, step_ref)
            snap = mon.snapshot()
    finally:
        unapply(binding)
        _torch.restore_dynamo(config)
        restore(saved)
    backend = next((r.backend for r in contract.regions if r.enabled), "inductor")
    return Recording(step_ref=step_ref, steps=steps, backend=backend, regions=_regions(binding, events, snap))


def _apply(binding: Any) -> None:
    """Compile every region in place; a setting torch rejects is the user's to fix."""
    try:
        apply(binding)
    except Exception as exc:
        raise StepError(f"applying the contract raised {_brief(exc)}; run `compile-contract check` on it") from None


def _run(events: Recorder, model: nn.Module, step: Callable, steps: int, step_ref: str) -> None:
    """Call the step; its exception becomes one located line (which call, where in the user's code)."""
    for i in range(steps):
        events.step = i
        try:
            step(model, i)
        except Exception as exc:  # the user's step may raise anything
            raise StepError(
                f"step {step_ref!r} raised {_brief(exc)} at {_where(exc, step)} (call {i + 1} of {steps}, "
                "compiled under the contract); fix the step, or pass a step that runs"
            ) from None


def _regions(binding: Any, events: Recorder, snap: dict[str, dict[str, Any]]) -> dict[str, RegionRecord]:
    """Fold the monitor's events into one record per region."""
    out = {name: RegionRecord(name=name) for name in binding.regions}
    params = {name: _params(rb) for name, rb in binding.regions.items()}
    for e in events.events:
        rec = out.get(e.fields.get("region", ""))
        if rec is not None:
            _fold(rec, e.step, e.name, e.fields, params[rec.name])
    for name, rec in out.items():
        rec.break_sites = int(snap.get(name, {}).get("budget_graph_breaks", len(rec.breaks)))
    return out


def _fold(rec: RegionRecord, step: int, event: str, f: dict[str, Any], params: list[str]) -> None:
    """One monitor event into its region's record (`site` and `generalizing` only come from newer monitors)."""
    if event == "compile":
        rec.compiles.append(
            Compile(
                step=step,
                path=str(f.get("module", "")),
                compile_id=str(f.get("compile_id", "")),
                seconds=float(f.get("seconds") or 0.0),
                recompile=bool(f.get("recompile")),
            )
        )
    elif event == "recompile":
        guard = str(f.get("guard") or "")
        _suggest_dims(rec, guard, params)
        rec.guards.append(guard)
        rec.guard_sites.append(str(f.get("site") or ""))
        rec.generalizing += bool(f.get("generalizing"))
    elif event == "graph_break":
        reason = str(f.get("reason") or "")
        rec.breaks.setdefault((str(f.get("site") or ""), reason.split(" Explanation:")[0].strip()), reason)
    elif event == "recompile_limit_hit":
        rec.limit_hits += 1


def _params(rb: Any) -> list[str]:
    """Argument names of the region's compiled method, in order (what `dynamic_dims` may name)."""
    for t in rb.targets:
        return parameters(getattr(t.module, t.method)) or []
    return []


def _suggest_dims(rec: RegionRecord, guard: str, params: list[str]) -> None:
    """A size guard on an argument of the compiled method (by name, or `args[i]` by position): that dim is a
    `dynamic_dims` candidate."""
    for arg, dim in _SIZE_GUARD.findall(guard):
        positional = _POSITIONAL.match(arg)
        if positional:
            index = int(positional.group(1))
            arg = params[index] if index < len(params) else ""
        if arg in params:
            rec.dims.setdefault(arg, set()).add(int(dim))


def _brief(exc: BaseException) -> str:
    """`Type: message`, one bounded line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _where(exc: BaseException, step: Callable) -> str:
    """`file:line` of the innermost frame outside torch and this package's machinery (the user's code); the step's
    definition when the call itself failed (a wrong signature)."""
    import inspect
    import os

    import torch

    import monitor
    from contract import binding

    ours = tuple(
        os.path.dirname(f) + os.sep for f in (torch.__file__, monitor.__file__, binding.__file__, __file__) if f
    )
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if not f.filename.startswith(ours)]
    if user:
        return f"{user[-1].filename}:{user[-1].lineno}"
    try:
        return f"{inspect.getsourcefile(step)}:{inspect.getsourcelines(step)[1]} (the step's definition)"
    except (OSError, TypeError):
        return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
