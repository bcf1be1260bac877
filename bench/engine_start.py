"""One engine start in a benchmark's child process, as a restarted job makes it: `enforce` (which loads the warm
artifacts first), the monitor, one step. bench_warm_start.py and bench_precompile.py time it the same way."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]


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


def run(cmd: list[str], env: dict[str, str], *, name: str, timeout: float) -> subprocess.CompletedProcess:
    """A benchmark's subprocess in the repository root; its failure ends the benchmark with its stderr's tail."""
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    if out.returncode != 0:
        sys.exit(f"{name}: {' '.join(cmd[:3])} failed (rc={out.returncode}):\n{out.stderr[-3000:]}")
    return out


def timed_child(script: str, contract: Path, env: dict[str, str], *, name: str, timeout: float) -> dict[str, Any]:
    """`python SCRIPT --child CONTRACT` in a fresh process: the JSON line it prints last, plus its wall time."""
    t0 = time.perf_counter()
    out = run([sys.executable, script, "--child", str(contract)], env, name=name, timeout=timeout)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result
