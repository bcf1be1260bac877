"""Dynamic probe: apply the contract with a cheap backend, run the user's step, and read Dynamo's own evidence.

Evidence is what Dynamo reports, never an eager attribute diff: each compile (attributed to the region instance
whose compiled callable is on the stack, with the probe step it happened in), the guard failures that caused each
recompile, the graph breaks Dynamo logged during each compile (reason and user source line), frames Dynamo gave up
on, recompile-limit hits, and forward hooks that appeared on region modules after compile.

Afterwards the probe puts back what it and the step changed (`restore`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from contract import _torch
from contract.binding.apply import apply, set_call
from contract.binding.resolve import bind
from contract.binding.targets import Binding
from contract.checks.probe.restore import restore, snapshot
from contract.document.load import Contract


@dataclass(kw_only=True, frozen=True)
class GraphBreak:
    """One graph break Dynamo logged."""

    reason: str
    """Dynamo's reason text (first line: the kind of break)."""
    location: str = ""
    """`file:line` of the user code that broke (innermost user frame), "" when Dynamo gave none."""

    @property
    def site(self) -> tuple[str, str]:
        """What makes two breaks the same break: the reason's first line and the source line."""
        return first_line(self.reason), self.location


def first_line(text: str) -> str:
    """First non-blank line, whitespace folded."""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


@dataclass(kw_only=True)
class Compile:
    """One Dynamo compile attributed to a region instance."""

    region: str
    """Region name."""
    path: str
    """Module path of the instance whose compiled callable was compiling."""
    compile_id: str
    """Dynamo's `frame_id/frame_compile_id`."""
    reasons: list[str]
    """Guard failures that caused it (empty for a first compile of a frame)."""
    breaks: list[GraphBreak] = field(default_factory=list)
    """Graph breaks Dynamo logged while it compiled."""
    step: int = 0
    """Index of the probe step during which it compiled."""


@dataclass(kw_only=True)
class ProbeResult:
    """What the probe observed over its steps."""

    steps: int
    """Steps run (fewer than asked when the step raised)."""
    compiles: list[Compile] = field(default_factory=list)
    """Every compile attributed to a region, in order."""
    limit_hits: list[tuple[str, str]] = field(default_factory=list)
    """(region, Dynamo's warning text) for each recompile-limit hit."""
    hooks_added: list[tuple[str, str]] = field(default_factory=list)
    """(region, module path) of modules that gained forward hooks after compile."""
    error: str | None = None
    """The step's exception, one line, when it raised."""


class _Recorder(logging.Handler):
    """Compile callbacks and the recompile-limit log handler, attributing each event to a region instance."""

    def __init__(self, binding: Binding) -> None:
        super().__init__(level=logging.WARNING)
        self.binding = binding
        self.result = ProbeResult(steps=0)
        self.step = 0
        self.open: list[tuple[Any, Any, list[str]]] = []

    def start(self, args: Any) -> None:
        self.open.append((self._target(), _torch.graph_break_mark(), _torch.compiling_reasons()))

    def end(self, args: Any) -> None:
        if not self.open:
            return
        target, mark, reasons = self.open.pop()
        if target is None:
            return
        breaks = [GraphBreak(reason=r, location=loc) for r, loc in _torch.graph_breaks_since(mark)]
        self.result.compiles.append(
            Compile(
                region=target.region,
                path=target.path,
                reasons=reasons,
                breaks=breaks,
                compile_id=str(getattr(args, "compile_id", "")),
                step=self.step,
            )
        )

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, str) and record.msg.startswith("torch._dynamo hit config."):
            target = self._target()
            if target is not None:
                self.result.limit_hits.append((target.region, " ".join(record.getMessage().split())[:300]))

    def _target(self) -> Any:
        owner = _torch.compiling_owner()
        return self.binding.region_of(*owner) if owner is not None else None


def probe_contract(contract: Contract, backend: str) -> Contract:
    """The same regions compiled with the probe's backend (mode and options are Inductor's: dropped)."""
    regions = tuple(
        dataclasses.replace(r, backend=backend, mode=None, options={}) if r.enabled else r for r in contract.regions
    )
    return dataclasses.replace(contract, regions=regions)


def probe(
    contract: Contract, model: nn.Module, step: Callable[[nn.Module, int], Any], *, steps: int, backend: str = "eager"
) -> ProbeResult:
    """Run `steps` iterations of `step(model, i)` under the contract compiled with `backend`, then restore."""
    binding, _ = bind(probe_contract(contract, backend), model)
    config, saved = _torch.dynamo_config(), snapshot(model)
    hooks = _hook_ids(binding)
    recorder = _Recorder(binding)
    logger = logging.getLogger(_torch.LIMIT_LOGGER)
    torch.compiler.reset()
    marker = _torch.newest_compile_record()
    _torch.add_compile_callbacks(recorder.start, recorder.end)
    logger.addHandler(recorder)
    try:
        _apply_and_run(recorder, binding, model, step, steps)
        _count_skipped(recorder.result, _torch.skipped_frames(marker))
        recorder.result.hooks_added = _new_hooks(binding, hooks)
    finally:
        logger.removeHandler(recorder)
        _torch.remove_compile_callbacks(recorder.start, recorder.end)
        for target in binding.targets():
            set_call(target, None)
        _torch.restore_dynamo(config)
        restore(saved)
    return recorder.result


def _apply_and_run(recorder: _Recorder, binding: Binding, model: nn.Module, step: Callable, steps: int) -> None:
    result = recorder.result
    try:
        apply(binding)
    except Exception as exc:  # a compile setting torch rejects: CC1xx reports it; the probe says it could not run
        result.error = f"apply raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return
    for i in range(steps):
        recorder.step = i
        try:
            step(model, i)
        except Exception as exc:  # the user's step may raise anything: reported as a finding
            result.error = f"step {i} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            return
        result.steps = i + 1


def _count_skipped(result: ProbeResult, skipped: dict[str, tuple[str, str]]) -> None:
    """A frame Dynamo gave up on (runs eager, no break logged) is a graph break of its compile."""
    for c in result.compiles:
        if c.compile_id in skipped and not c.breaks:
            reason, location = skipped[c.compile_id]
            c.breaks = [GraphBreak(reason=f"frame skipped, runs eager: {first_line(reason)}", location=location)]


def _hook_ids(binding: Binding) -> dict[tuple[str, str], set[int]]:
    """Forward (pre-)hook ids of every module inside each region's targets."""
    out: dict[tuple[str, str], set[int]] = {}
    for t in binding.targets():
        for name, sub in t.module.named_modules():
            path = ".".join(p for p in (t.path, name) if p) or "<root>"
            out[(t.region, path)] = _torch.forward_hook_ids(sub)
    return out


def _new_hooks(binding: Binding, before: dict[tuple[str, str], set[int]]) -> list[tuple[str, str]]:
    after = _hook_ids(binding)
    return [key for key, ids in after.items() if ids - before.get(key, set())]
