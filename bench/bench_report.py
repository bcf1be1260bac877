"""Wall time of `compile-contract report` for a 1,000-region, 8-rank, 100,000-event run (target: under 5 s on 2
cores), whole process (Python start, imports, parse, aggregate, HTML, PNG, trace), median of several runs.

The event files are synthetic but written by the monitor's own writer (`monitor.events.EventFile`), so their format
is exactly what a monitored run leaves: every rank starts, compiles every region once (a lazily compiled backward
each), then recompiles, breaks graphs, breaches and hits limits at random (seeded), and one rank diverges.

Run: .venv/bin/python bench/bench_report.py [--runs 5] [--regions 1000] [--ranks 8] [--events 100000]
Prints the in-process stage split too; exits 1 when the median whole-process time misses the target.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_S = 5.0


def generate(out: Path, regions: int, ranks: int, events: int, seed: int = 0) -> list[Path]:
    """One events file per rank, `events` lines in all."""
    from monitor.events import EventFile

    rng = random.Random(seed)
    names = [f"layers.{i}" for i in range(regions)]
    settings = {
        n: {
            "recompile_budget": 2,
            "graph_break_budget": 1,
            "on_breach": "eager",
            "backend": "inductor",
            "state": "compiled",
        }
        for n in names
    }
    per_rank = events // ranks
    files = []
    for rank in range(ranks):
        clock = [1_800_000_000.0 + rank * 0.01]

        def wall(clock: list[float] = clock) -> float:
            clock[0] += rng.uniform(0.0005, 0.02)
            return clock[0]

        path = out / f"events-{rank}.jsonl"
        ident = {"rank": str(rank), "local_rank": str(rank % 8), "world_size": str(ranks)}
        f = EventFile(str(path), ident, on_error=lambda exc: (_ for _ in ()).throw(exc), wall=wall)
        start = {
            "contract": "bench",
            "contract_sha256": "0" * 64,
            "torch": "2.13.0",
            "python": "3.11",
            "hostname": f"node{rank // 8}",
            "region_settings": settings,
        }
        f.write("info", "monitor_started", start)
        written = (
            1
            + _first_compiles(f, names, rng)
            + _storm(f, names, rng, per_rank - 2 - 2 * regions, diverge=rank == ranks - 1)
        )
        f.write("info", "monitor_stopped", {"summary": {}})
        f.close()
        assert written + 1 == per_rank, (written, per_rank)
        files.append(path)
    return files


def _first_compiles(f, names: list[str], rng: random.Random) -> int:
    for i, name in enumerate(names):
        miss = rng.random() < 0.3
        f.write(
            "info",
            "compile",
            {
                "region": name,
                "module": name,
                "method": "forward",
                "compile_id": f"{i}/0",
                "seconds": rng.uniform(0.05, 2.0),
                "recompile": False,
                **(
                    {"fx_graph_miss": 1, "aot_autograd_miss": 1} if miss else {"fx_graph_hit": 1, "aot_autograd_hit": 1}
                ),
            },
        )
        f.write(
            "info",
            "aux_compile",
            {"region": name, "compile_id": f"{i}/0", "trigger": "lazy_backward", "seconds": rng.uniform(0.02, 1.0)},
        )
    return 2 * len(names)


def _storm(f, names: list[str], rng: random.Random, budget: int, *, diverge: bool) -> int:
    """Recompiles (compile + recompile line), graph breaks, breaches and limit hits until `budget` lines are written."""
    n, counts = 0, dict.fromkeys(names, 0)
    hot = names[: len(names) // 10] + (names[-5:] if diverge else [])
    while n < budget:
        name = rng.choice(hot)
        roll = rng.random()
        if roll < 0.6 and budget - n >= 2:
            counts[name] += 1
            f.write(
                "info",
                "compile",
                {
                    "region": name,
                    "module": name,
                    "method": "forward",
                    "compile_id": f"9/{counts[name]}",
                    "seconds": rng.uniform(0.05, 0.5),
                    "recompile": True,
                },
            )
            f.write(
                "warning",
                "recompile",
                {
                    "region": name,
                    "module": name,
                    "reason": rng.choice(["shape", "value", "dtype"]),
                    "guard": f"9/{counts[name] - 1}: tensor 'x' size mismatch at index 1. expected {counts[name]}, actual {counts[name] + 1}",
                    "count": counts[name],
                    "budget": 2,
                    "counted": True,
                },
            )
            n += 2
        elif roll < 0.9:
            f.write(
                "warning",
                "graph_break",
                {
                    "region": name,
                    "compile_id": "9/0",
                    "site": f"model.py:{rng.randint(10, 99)}",
                    "reason": "data-dependent branching",
                    "sites": rng.randint(1, 3),
                    "skipped_frame": False,
                },
            )
            n += 1
        elif roll < 0.97:
            f.write(
                "error",
                "budget_exceeded",
                {
                    "region": name,
                    "budget_kind": "recompile_budget",
                    "count": 3,
                    "budget": 2,
                    "action": "eager",
                    "last_reasons": ["x"],
                },
            )
            n += 1
        else:
            f.write(
                "error",
                "recompile_limit_hit",
                {"region": name, "compile_id": "9/8", "last_reason": "size mismatch", "source": "warning"},
            )
            n += 1
    return n


def stages(files: list[Path], out: Path) -> dict[str, float]:
    """In-process split (imports already warm after the first call)."""
    from monitor.report import html, timeline, trace
    from monitor.report.model import build
    from monitor.report.read import read

    t = [time.perf_counter()]
    reading = read([str(p) for p in files])
    t.append(time.perf_counter())
    run = build(reading)
    t.append(time.perf_counter())
    drawn = timeline.render(run)
    t.append(time.perf_counter())
    page = html.render(run, drawn, None)
    t.append(time.perf_counter())
    doc = trace.render(run)
    t.append(time.perf_counter())
    (out / "stage.html").write_text(page)
    (out / "stage.json").write_text(doc)
    return dict(
        zip(
            ("read", "aggregate", "png", "html", "trace"), (b - a for a, b in zip(t, t[1:], strict=False)), strict=False
        )
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--regions", type=int, default=1000)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    exe = shutil.which("compile-contract", path=str(Path(sys.executable).parent)) or "compile-contract"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        files = generate(base, args.regions, args.ranks, args.events)
        lines = sum(1 for p in files for _ in p.open())
        size = sum(p.stat().st_size for p in files)
        print(f"{len(files)} files, {lines} events, {size / 1e6:.1f} MB, {args.regions} regions; {os.cpu_count()} CPUs")
        cmd = [exe, "report", str(base / "events-*.jsonl"), "-o", str(base / "out")]
        subprocess.run(cmd, capture_output=True, check=True)  # warm-up: page cache, matplotlib's font cache
        times, cpu = [], []
        for _ in range(args.runs):
            used, start = _children_cpu(), time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
            cpu.append(_children_cpu() - used)
        split = [stages(files, base) for _ in range(max(1, args.runs // 2))]
        page = (base / "out" / "report.html").stat().st_size
        trace = (base / "out" / "trace.json").stat().st_size
    med = statistics.median(times)
    print(
        f"{shlex.join(['compile-contract', 'report', 'events-*.jsonl', '-o', 'out'])}\n    runs={len(times)} median={med:.3f}s min={min(times):.3f}s max={max(times):.3f}s"
    )
    print(
        f"    CPU time (user+sys) of the process and its drawing child: median {statistics.median(cpu):.3f}s; load average {os.getloadavg()[0]:.2f} (wall time is only meaningful on a quiet machine)"
    )
    print(
        "    in-process stages (median): "
        + ", ".join(f"{k} {statistics.median(s[k] for s in split):.3f}s" for k in split[0])
    )
    print(f"    report.html {page / 1e6:.1f} MB, trace.json {trace / 1e6:.1f} MB")
    print(f"report median {med:.3f}s vs target {TARGET_S:.1f}s: {'ok' if med < TARGET_S else 'MISSED'}")
    return 0 if med < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
