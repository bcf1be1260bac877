"""Dynamic probe: apply the contract with a cheap backend and run the user's step under the runtime monitor itself.

The monitor is the one reader of Dynamo's evidence and the one judge of budgets: the probe starts it as an observed
run (`contract.observe`: no port, a private registry, no budget action) with a logger that keeps every event it
emits and the probe step it happened in: each compile attributed to its region instance, each recompile with the
guard that failed and the user's `file:line` it names, each distinct graph-break site (frames Dynamo gave up on
included), each recompile-limit hit. The probe adds what only a startup run can see: module hooks that appeared on
region modules after compile, and a step that raised. The startup verdict (CC401/CC403) and the runtime budgets
therefore cannot disagree on a run.

Afterwards the probe puts back what it and the step changed (`restore`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from contract import _compiled, _torch
from contract.binding.apply import apply, engine_compiles, unapply
from contract.binding.resolve import bind
from contract.binding.targets import Binding
from contract.checks.probe.restore import restore, snapshot
from contract.checks.probe.uncompiled import never_compiled
from contract.document.load import Contract
from contract.observe import Event, Recorder, observer, relaxed
from monitor.unclaimed import LABEL as UNCLAIMED


@dataclass(kw_only=True)
class ProbeResult:
    """What the probe observed over its steps."""

    steps: int
    """Steps run (fewer than asked when the step raised)."""
    events: list[Event] = field(default_factory=list)
    """Every event of the monitor, in order."""
    regions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The monitor's snapshot at the end (counts and budget use per region)."""
    hooks_added: list[tuple[str, str, str]] = field(default_factory=list)
    """(region, module path, kinds) of modules that gained forward or backward hooks after compile."""
    error: str | None = None
    """The step's exception, one line, when it raised."""
    compile_failed: bool = False
    """The exception came from compiling a region (Dynamo's tracing or the backend), not from the user's step."""
    structure: dict[str, str] = field(default_factory=dict)
    """Module path of each region instance -> its structure (the classes of its modules, in order): instances of
    one structure are meant to share their compiled code."""
    uncompiled: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Region -> (why, fix) for a region the step calls that Dynamo never compiled (it ran eager with no record)."""

    def named(self, name: str) -> list[Event]:
        """The events of one kind, in order."""
        return [e for e in self.events if e.name == name]


class _HooksAtCompile:
    """The module hooks each region instance had when it first compiled (what its graph was traced with)."""

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self.ids: dict[tuple[str, str], set[tuple[str, int]]] = {}
        self._compiled: set[tuple[str, str]] = set()

    def __call__(self, event: Event) -> None:
        instance = (event.fields.get("region", ""), event.fields.get("module", ""))
        if event.name == "compile" and instance not in self._compiled:
            self._compiled.add(instance)
            self.ids.update(_hook_ids(self.binding, instance))


def probe(
    contract: Contract,
    model: nn.Module,
    step: Callable[[nn.Module, int], Any],
    *,
    steps: int,
    backend: str = "eager",
) -> ProbeResult:
    """Run `steps` iterations of `step(model, i)` under the contract compiled with `backend`, then restore."""
    binding, _ = bind(relaxed(contract, backend=backend), model)
    config, saved = _torch.dynamo_config(), snapshot(model)
    engine = list(engine_compiles(model).values())  # the engine's own compiles run eager while the probe runs
    for comp in engine:
        _compiled.put(comp, comp.eager)
    hooks = _HooksAtCompile(binding)
    recorder = Recorder(on_event=hooks)
    result = ProbeResult(steps=0)
    torch.compiler.reset()
    mon = observer(binding, recorder)  # after the snapshot: importing structlog draws from Python's `random`
    try:
        _apply_and_run(recorder, binding, model, step, steps, result)
        result.regions = {name: s for name, s in mon.snapshot().items() if name != UNCLAIMED}
        if result.error is None:
            compiled = {e.fields["region"] for e in recorder.events if e.name == "compile"}
            result.uncompiled = never_compiled(binding, step, compiled, result.steps - 1)
        result.hooks_added = _new_hooks(binding, hooks.ids)
        result.structure = {t.path or "<root>": _structure(t.module) for t in binding.targets()}
    finally:
        mon.stop()
        unapply(binding)
        for comp in engine:
            _compiled.put(comp, comp.compiled)
        _torch.restore_dynamo(config)
        restore(saved)
    result.events = recorder.events
    return result


def _apply_and_run(
    recorder: Recorder, binding: Binding, model: nn.Module, step: Callable, steps: int, result: ProbeResult
) -> None:
    try:
        apply(binding)
    except Exception as exc:  # a compile setting torch rejects: CC1xx reports it; the probe says it could not run
        result.error = f"apply raised {_one_line(exc)}"
        return
    for i in range(steps):
        recorder.step = i
        try:
            step(model, i)
        except Exception as exc:  # the user's step may raise anything: reported as a finding
            result.compile_failed = _torch.is_compile_failure(exc) and _runs_eager(step, model, i)
            result.error = f"step {i} raised {_compile_error(exc) if result.compile_failed else _one_line(exc)}"
            return
        result.steps = i + 1


def _structure(module: nn.Module) -> str:
    """The classes of a module's modules, in order (a dense layer and an MoE layer under one glob differ)."""
    return ",".join(type(m).__qualname__ for m in module.modules())


def _runs_eager(step: Callable, model: nn.Module, i: int) -> bool:
    """Whether the step that failed while compiling runs with every region eager (then only compiling fails it)."""
    try:
        with torch.compiler.set_stance("force_eager"):
            step(model, i)
    except Exception:  # the user's own code fails too: not a compile failure
        return False
    return True


def _compile_error(exc: BaseException) -> str:
    """Dynamo's error with its root cause, which says what to fix (`There was no fake impl registered for ...`)."""
    cause: BaseException = exc
    while (cause.__cause__ or cause.__context__) is not None and len(str(cause)) > 0:
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    if cause is exc:
        return _one_line(exc)
    text = " ".join(str(cause).split())[:240]
    return f"{type(exc).__name__} (caused by {type(cause).__name__}: {text})"


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def _hook_ids(binding: Binding, instance: tuple[str, str] | None = None) -> dict[tuple[str, str], set[tuple[str, int]]]:
    """(kind, id) of the hooks of every module inside each region's targets (only one (region, module path)
    target's when `instance` is given)."""
    out: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for t in binding.targets():
        if instance is not None and (t.region, t.path or "<root>") != instance:  # the monitor says <root>
            continue
        for name, sub in t.module.named_modules():
            path = ".".join(p for p in (t.path, name) if p) or "<root>"
            out[(t.region, path)] = _torch.hook_ids(sub)
    return out


def _new_hooks(binding: Binding, at_compile: dict[tuple[str, str], set[tuple[str, int]]]) -> list[tuple[str, str, str]]:
    """(region, module path, kinds) of modules of compiled instances with hooks their instance's first compile did
    not see."""
    out = []
    for key, ids in _hook_ids(binding).items():
        new = ids - at_compile.get(key, ids)
        if new:
            out.append((*key, " and ".join(sorted({kind + "s" for kind, _ in new}))))
    return out
