"""Wall time of `compile-contract doctor` including Python start (target: under 2 s), as a launcher pays it.

Run: .venv/bin/python bench/bench_doctor.py [--runs 10] [CONTRACT]
Prints each figure with the exact command measured; exits 1 when the median misses the target.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0


def measure(cmd: list[str], runs: int, env: dict[str, str]) -> list[float]:
    """Wall seconds of each run (one warm-up run first, so the page cache is comparable)."""
    subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=False)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if res.returncode not in (0, 1):
            sys.exit(f"{shlex.join(cmd)} exited {res.returncode}: {res.stderr.strip()}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("contract", nargs="?", default="contracts/demo.toml")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    exe = shutil.which("compile-contract", path=str(Path(sys.executable).parent)) or "compile-contract"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    cases = [[exe, "doctor", args.contract], [sys.executable, "-c", "pass"], [sys.executable, "-c", "import torch"]]
    worst = 0.0
    for cmd in cases:
        t = measure(cmd, args.runs if cmd[1] == "doctor" else max(3, args.runs // 3), env)
        med = statistics.median(t)
        print(f"{shlex.join(cmd)}\n    runs={len(t)} median={med:.3f}s min={min(t):.3f}s max={max(t):.3f}s")
        if cmd[1] == "doctor":
            worst = med
    print(f"doctor median {worst:.3f}s vs target {TARGET_S:.1f}s: {'ok' if worst < TARGET_S else 'MISSED'}")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
