"""Dynamic probe: apply the contract with a cheap backend, run the user's step, and read Dynamo's own evidence.

Evidence is what Dynamo reports, never an eager attribute diff: each compile (attributed to the region instance
whose compiled callable is on the stack), the guard failures that caused each recompile, the graph breaks counted
during each compile, recompile-limit hits, and forward hooks that appeared on region modules after compile.
Afterwards every compiled entry is dropped (`torch._dynamo.reset()`), Dynamo's config is put back, the probe's
binding is switched back to eager and the model's buffers, Python scalar attributes and train/eval flags are
restored, so the engine's real compile starts clean. Parameters are not copied: the step must not train.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

from contract import _torch
from contract.apply import apply, set_call
from contract.binding import Binding, bind
from contract.load import Contract

_SCALARS = (int, float, bool, str, type(None))


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
    breaks: dict[str, int]
    """Graph-break reasons counted while it compiled."""


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
        self.open: list[tuple[Any, dict[str, int], list[str]]] = []

    def start(self, args: Any) -> None:
        self.open.append((self._target(), _torch.graph_break_counts(), _torch.compiling_reasons()))

    def end(self, args: Any) -> None:
        if not self.open:
            return
        target, before, reasons = self.open.pop()
        if target is None:
            return
        after = _torch.graph_break_counts()
        breaks = {k: v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}
        self.result.compiles.append(Compile(region=target.region, path=target.path, reasons=reasons, breaks=breaks,
                                            compile_id=str(getattr(args, "compile_id", ""))))

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
    regions = tuple(dataclasses.replace(r, backend=backend, mode=None, options={}) if r.enabled else r
                    for r in contract.regions)
    return dataclasses.replace(contract, regions=regions)


def probe(contract: Contract, model: nn.Module, step: Callable[[nn.Module, int], Any], *, steps: int,
          backend: str = "eager") -> ProbeResult:
    """Run `steps` iterations of `step(model, i)` under the contract compiled with `backend`, then restore."""
    binding, _ = bind(probe_contract(contract, backend), model)
    config, saved = _torch.dynamo_config(), _snapshot(model)
    hooks = _hook_ids(binding)
    recorder = _Recorder(binding)
    logger = logging.getLogger(_torch.LIMIT_LOGGER)
    torch._dynamo.reset()
    marker = _torch.newest_compile_record()
    _torch.add_compile_callbacks(recorder.start, recorder.end)
    logger.addHandler(recorder)
    try:
        _apply_and_run(recorder.result, binding, model, step, steps)
        _count_skipped(recorder.result, _torch.skipped_frames(marker))
        recorder.result.hooks_added = _new_hooks(binding, hooks)
    finally:
        logger.removeHandler(recorder)
        _torch.remove_compile_callbacks(recorder.start, recorder.end)
        for target in binding.targets():
            set_call(target, None)
        _torch.restore_dynamo(config)
        _restore(model, saved)
    return recorder.result


def _apply_and_run(result: ProbeResult, binding: Binding, model: nn.Module, step: Callable, steps: int) -> None:
    try:
        apply(binding)
    except Exception as exc:  # a compile setting torch rejects: CC1xx reports it; the probe says it could not run
        result.error = f"apply raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return
    for i in range(steps):
        try:
            step(model, i)
        except Exception as exc:  # the user's step may raise anything: reported as a finding
            result.error = f"step {i} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            return
        result.steps = i + 1


def _count_skipped(result: ProbeResult, skipped: dict[str, str]) -> None:
    """A frame Dynamo gave up on (runs eager, no break counted) is a graph break of its compile."""
    for c in result.compiles:
        if c.compile_id in skipped and not c.breaks:
            head = next((line.strip() for line in skipped[c.compile_id].splitlines() if line.strip()), "")
            c.breaks = {f"frame skipped, runs eager: {head}": 1}


def _hook_ids(binding: Binding) -> dict[tuple[str, str], set[int]]:
    """Forward (pre-)hook ids of every module inside each region's targets."""
    out: dict[tuple[str, str], set[int]] = {}
    for t in binding.targets():
        for name, sub in t.module.named_modules():
            path = ".".join(p for p in (t.path, name) if p) or "<root>"
            out[(t.region, path)] = set(sub._forward_hooks) | set(sub._forward_pre_hooks)
    return out


def _new_hooks(binding: Binding, before: dict[tuple[str, str], set[int]]) -> list[tuple[str, str]]:
    after = _hook_ids(binding)
    return [key for key, ids in after.items() if ids - before.get(key, set())]


def _snapshot(model: nn.Module) -> list[tuple[nn.Module, dict[str, Any], dict[str, torch.Tensor | None], bool]]:
    """Buffers, Python scalar attributes and train flags of every module, to undo the probe's steps."""
    out = []
    for m in model.modules():
        scalars = {k: v for k, v in vars(m).items() if type(v) in _SCALARS and k != "training"}
        buffers = {k: (b.detach().clone() if b is not None else None) for k, b in m._buffers.items()}
        out.append((m, scalars, buffers, m.training))
    return out


def _restore(model: nn.Module, saved: list) -> None:
    with torch.no_grad():
        for m, scalars, buffers, training in saved:
            for k, v in scalars.items():
                m.__dict__[k] = v
            for k, b in buffers.items():
                current = m._buffers.get(k)
                if b is not None and current is not None and current.shape == b.shape:
                    current.copy_(b)
                else:
                    m._buffers[k] = b
            m.training = training
