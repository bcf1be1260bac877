"""Monitor overhead: steady-state step time monitored vs unmonitored (interleaved) and the cost per compile event.

Run: `python bench/bench_monitor_overhead.py [--rounds 30 --steps 200 --compiles 200 --backend eager --device cpu]`.
Targets: step-time ratio <= 1.01 (nothing of ours runs on a cache hit), attribution <= 20 us per compile event.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from prometheus_client import CollectorRegistry
from torch import nn

import monitor
from contract.apply import apply
from contract.check import check

CONTRACT = '[contract]\nname = "bench"\n[defaults]\nbackend = "{backend}"\n[[region]]\nname = "net"\nmodule = ""\n'


class Null:
    """A logger that drops events (the benchmark measures the monitor, not log I/O)."""

    def __getattr__(self, name: str):
        return lambda *a, **k: None


class Tiny(nn.Module):
    """One Linear(16, 16): launch-bound, so any per-step cost of ours would show."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


def build(backend: str, device: str, tmp: Path) -> tuple[nn.Module, object]:
    """The tiny model compiled through the contract (a user class: Dynamo skips bare torch.nn modules)."""
    path = tmp / f"{backend}.toml"
    path.write_text(CONTRACT.format(backend=backend))
    model = Tiny().to(device)
    _, binding, _ = check(path, model)
    return model, apply(binding)


def time_steps(model: nn.Module, x: torch.Tensor, steps: int, device: str) -> float:
    """Seconds per step over `steps` calls (synchronized on CUDA)."""
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        model(x)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps


def step_ratio(args: argparse.Namespace, tmp: Path) -> tuple[float, float, float]:
    """Interleave rounds with the monitor's hooks registered and not, on the same compiled model."""
    model, binding = build(args.backend, args.device, tmp)
    x = torch.randn(8, 16, device=args.device)
    mon = monitor.start(binding, registry=CollectorRegistry(), logger=Null(), serve=False)
    with torch.no_grad():
        model(x)
        time_steps(model, x, args.steps, args.device)
        on, off = [], []
        for _ in range(args.rounds):
            on.append(time_steps(model, x, args.steps, args.device))
            mon.stop()
            off.append(time_steps(model, x, args.steps, args.device))
            mon = monitor.start(binding, registry=CollectorRegistry(), logger=Null(), serve=False)
    mon.stop()
    m_on, m_off = statistics.median(on), statistics.median(off)
    return m_on / m_off, m_on * 1e6, m_off * 1e6


def attribution_cost(args: argparse.Namespace, tmp: Path, defer_gc: bool) -> tuple[float, float]:
    """Per compile event: our start+end hooks, timed inside real Dynamo compiles (recompiles via a changing int)."""
    class Hazard(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin, self.k = nn.Linear(16, 16), 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.k += 1
            return self.lin(x) + self.k

    path = tmp / "hazard.toml"
    path.write_text(CONTRACT.format(backend="eager") + "recompile_budget = 1000000\n")
    model = Hazard()
    _, binding, _ = check(path, model)
    apply(binding)
    mon = monitor.start(binding, registry=CollectorRegistry(), logger=Null(), serve=False)
    spent: list[float] = []
    start, end = mon._start_cb, mon._end_cb

    def timed(fn):
        def hook(a):
            if defer_gc:
                gc.disable()  # collections owed to the compile's garbage run after our hook, not inside it
            t0 = time.perf_counter_ns()
            fn(a)
            spent.append(time.perf_counter_ns() - t0)
            if defer_gc:
                gc.enable()
        return hook

    from torch._dynamo.callback import callback_handler
    s_i, e_i = callback_handler.start_callbacks.index(start), callback_handler.end_callbacks.index(end)
    callback_handler.start_callbacks[s_i], callback_handler.end_callbacks[e_i] = timed(start), timed(end)
    with torch.no_grad(), torch._dynamo.config.patch(recompile_limit=args.compiles + 10):
        for _ in range(args.compiles):
            model(torch.randn(2, 16))
    callback_handler.start_callbacks[s_i], callback_handler.end_callbacks[e_i] = start, end
    mon.stop()
    pairs = [spent[i] + spent[i + 1] for i in range(0, len(spent) - 1, 2)]
    return statistics.median(pairs) / 1e3, max(pairs) / 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--compiles", type=int, default=200)
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ratio, us_on, us_off = step_ratio(args, Path(tmp))
        median_us, max_us = attribution_cost(args, Path(tmp), defer_gc=False)
        torch._dynamo.reset()
        median_ng, max_ng = attribution_cost(args, Path(tmp), defer_gc=True)
    print(f"command: python bench/bench_monitor_overhead.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"torch {torch.__version__}, device {args.device}, backend {args.backend}")
    print(f"steady-state step: monitored {us_on:.2f} us, unmonitored {us_off:.2f} us, ratio {ratio:.4f} (target <= 1.01)")
    print(f"per compile event (start+end hooks, attribution + ledger): median {median_us:.1f} us, "
          f"max {max_us:.1f} us (target <= 20 us)")
    print(f"  same, GC pauses owed to the compile deferred past our hook: median {median_ng:.1f} us, "
          f"max {max_ng:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
