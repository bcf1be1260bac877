"""One engine start in a benchmark's child process, as a restarted job makes it: `enforce` (which loads the warm
artifacts first), the monitor, one step. bench_warm_start.py and bench_precompile.py time it the same way."""

from __future__ import annotations

import time
from typing import Any, NamedTuple


class NullLogger:
    """Drops monitor log events (the benchmarks measure compiling, not log I/O)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


class Started(NamedTuple):
    """What one start measured."""

    snapshot: dict[str, Any]
    """The monitor's snapshot after the first step, regions only (`<unclaimed>` left out)."""
    enforce_s: float
    """Seconds in `contract.enforce` (artifacts loaded, checks, apply)."""
    first_step_at: float
    """Seconds from `t0` (the child's start) to the end of the first step."""


def start(contract_path: str, t0: float, device: str) -> Started:
    """enforce + monitor + one step of the contract's model; timings from `t0`."""
    import contract
    import monitor
    from contract.document.load import load
    from contract.document.refs import resolve

    doc, _ = load(contract_path)
    assert doc is not None and doc.meta is not None and doc.meta.model and doc.meta.step
    model, step = resolve(doc.meta.model, "model")(), resolve(doc.meta.step, "step")
    t_enforce = time.perf_counter()
    binding = contract.enforce(model, contract_path)
    enforce_s = time.perf_counter() - t_enforce
    with monitor.start(binding, serve=False, logger=NullLogger()) as mon:
        step(model, 0)
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
        first_step_at = time.perf_counter() - t0
        snap = {n: s for n, s in mon.snapshot().items() if n != "<unclaimed>"}
    return Started(snap, enforce_s, first_step_at)
