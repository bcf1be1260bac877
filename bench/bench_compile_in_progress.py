"""The in-progress gauge during one real long compile: scrape the monitor every second while Inductor compiles (on a
GPU: max-autotune), print the gauge's climb and the monitor's events (`compile_started`, a mid-compile
`budget_exceeded` with where the compile was, `compile`).

Run: `python bench/bench_compile_in_progress.py --device cuda --mode max-autotune --budget 20` (one H200: a cold
max-autotune compile of three GEMM shapes); on CPU `--device cpu --mode default --budget 1` for a short check.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import torch
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import monitor
from contract.binding.apply import apply
from contract.pipeline import check

CONTRACT = (
    '[contract]\nname = "in-progress"\n[[region]]\nname = "mlp"\nmodule = "mlp"\nbackend = "inductor"\n'
    'mode = "{mode}"\ncompile_seconds_budget = {budget}\n'
)
AGE = "torch_compile_compile_in_progress_seconds"


class Keep:
    """A logger keeping (wall time, event, fields) of every monitor event."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **kw: self.events.append((time.time(), event, kw))


class MLP(nn.Module):
    """Three GEMM shapes (max-autotune benchmarks each): a decoder MLP block."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.up, self.gate, self.down = nn.Linear(d, 4 * d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))


def scrape(registry: CollectorRegistry) -> float:
    text = generate_latest(registry).decode()
    return next(
        s.value
        for f in text_string_to_metric_families(text)
        if f.name == AGE
        for s in f.samples
        if s.labels["region"] == "mlp"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--mode", default="max-autotune")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(tmp, "inductor"))  # cold: a real first compile
        model = nn.Module()
        dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
        model.mlp = MLP(args.dim).to(args.device, dtype)
        path = Path(tmp) / "c.toml"
        path.write_text(CONTRACT.format(mode=args.mode, budget=args.budget))
        _, binding, findings = check(path, model)
        assert binding is not None, [f.message for f in findings]
        log, registry = Keep(), CollectorRegistry()
        mon = monitor.start(apply(binding), logger=log, registry=registry, serve=False)
        samples: list[tuple[float, float]] = []
        done = threading.Event()

        def scraper() -> None:
            while not done.is_set():
                samples.append((time.time(), scrape(registry)))
                done.wait(args.interval)

        thread = threading.Thread(target=scraper, daemon=True)
        t0 = time.time()
        thread.start()
        with torch.no_grad():
            model.mlp(torch.randn(64, args.dim, device=args.device, dtype=dtype))
        if args.device == "cuda":
            torch.cuda.synchronize()
        done.set()
        thread.join()
        samples.append((time.time(), scrape(registry)))
        mon.stop()
    report(args, t0, samples, log.events)
    return 0


def report(args: argparse.Namespace, t0: float, samples: list[tuple[float, float]], events: list) -> None:
    name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"command: python bench/bench_compile_in_progress.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"torch {torch.__version__}, device {args.device} ({name}), mode {args.mode}, budget {args.budget} s")
    print("scrapes (t since start, torch_compile_compile_in_progress_seconds{region='mlp'}):")
    print("  " + ", ".join(f"{t - t0:.0f}s={v:.1f}" for t, v in samples))
    for ts, event, kw in events:
        if event in ("compile_started", "budget_exceeded", "compile"):
            keep = ("compile_id", "seconds", "count", "action", "phase", "at", "workers", "waiting_on")
            print(f"  t+{ts - t0:6.1f}s {event}: " + ", ".join(f"{k}={kw[k]}" for k in keep if k in kw))
    climbing = [v for _, v in samples if v > 0]
    ok = len(climbing) >= 2 and all(b > a for a, b in zip(climbing, climbing[1:], strict=False))
    print(
        f"gauge climbed over {len(climbing)} scrapes while compiling, back to {samples[-1][1]} after: {'OK' if ok else 'NO'}"
    )


if __name__ == "__main__":
    sys.exit(main())
