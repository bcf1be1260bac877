"""The twin probe at real shapes: Hugging Face decoders at their published 7B-70B depth and widths (built on the meta
device, no weights), each with the twin `compile-contract init` writes, then `compile-contract check` with the probe.

Per architecture, in a fresh temporary directory (the working directory, so the twin file imports from it), two
fresh processes as a user or CI runs them:

1. `compile-contract init tests.checks.hf_shapes:NAME --step tests.checks.hf_models:step --backend eager -o NAME.toml`
   (the model on meta, the twin written next to the contract, the step recorded on the twin);
2. `compile-contract check NAME.toml --format json` (the model on meta for every check, the probe's 8 steps on the
   twin), the figure the target is about: under 60 s on 2 cores.

Then the planted hazards: `tests.checks.hf_planted:llama3_70b` (Llama-3-70B's shape; a per-call counter in every
decoder layer, a print in the final norm) through init without a step, then `check --step`: the probe's findings
(CC401/CC402, CC403) come from the twin, the scan's (CC301, CC304) from the model on meta.

Prints one row per architecture (real parameters, twin parameters and layers, wall and CPU seconds of each process,
exit code, finding codes) and the commands. Run from the repository root:
`python bench/bench_twin_probe.py [--only llama3_70b,...] [--steps 8]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = "tests.checks.hf_models:step"
COMMAND = "python bench/bench_twin_probe.py"


def run(args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the child, exit code, stdout) of one `compile-contract` process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "contract.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:], file=sys.stderr)
    return wall, cpu, proc.returncode, proc.stdout


def sizes(name: str, module: str) -> tuple[float, str]:
    """Billions of parameters of the model built on meta, and its class."""
    import importlib

    import torch

    factory = getattr(importlib.import_module(module), name)
    with torch.device("meta"):
        model = factory()
    return sum(p.numel() for p in model.parameters()) / 1e9, type(model).__name__


def twin_params(path: Path) -> tuple[float, int]:
    """Millions of parameters and layers of the twin the init wrote."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    twin = module.twin()
    return sum(p.numel() for p in twin.parameters()) / 1e6, twin.config.num_hidden_layers


def codes(stdout: str) -> list[str]:
    """`CODE@location` of each finding in `check --format json` output."""
    try:
        found = json.loads(stdout)["findings"]
    except (ValueError, KeyError):
        return ["<unreadable output>"]
    return [f"{f['code']}@{f['location']}" for f in found]


def one(name: str, steps: int) -> dict:
    """init then check for one architecture, in its own working directory."""
    with tempfile.TemporaryDirectory(prefix=f"cc-twin-{name}-") as tmp:
        cwd = Path(tmp)
        init = ["init", f"tests.checks.hf_shapes:{name}", "--step", STEP, "--backend", "eager"]
        init += ["--steps", str(steps), "-o", f"{name}.toml"]
        i_wall, i_cpu, i_rc, _ = run(init, cwd)
        twin = cwd / f"{name}_twin.py"
        c_wall, c_cpu, c_rc, out = run(["check", f"{name}.toml", "--format", "json"], cwd)
        tw = twin_params(twin) if twin.exists() else (0.0, 0)
    return {
        "init_s": i_wall, "init_cpu_s": i_cpu, "init_rc": i_rc, "check_s": c_wall, "check_cpu_s": c_cpu,
        "check_rc": c_rc, "findings": codes(out), "twin_m": tw[0], "twin_layers": tw[1],
    }  # fmt: skip


def planted(steps: int) -> dict:
    """Hazards planted in the Llama-3-70B shape, found through the twin."""
    with tempfile.TemporaryDirectory(prefix="cc-twin-planted-") as tmp:
        cwd = Path(tmp)
        init = ["init", "tests.checks.hf_planted:llama3_70b", "--backend", "eager", "-o", "planted.toml"]
        run(init, cwd)
        wall, cpu, rc, out = run(["check", "planted.toml", "--step", STEP, "--format", "json"], cwd)
    return {"check_s": wall, "check_cpu_s": cpu, "check_rc": rc, "findings": codes(out)}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from tests.checks.hf_shapes import SHAPES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated factory names (default: all)")
    parser.add_argument("--steps", type=int, default=8, help="calls init records and the probe runs (default 8)")
    args = parser.parse_args()
    names = [n for n in SHAPES if not args.only or n in args.only.split(",")]
    import torch
    import transformers

    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}, Python {platform.python_version()}")  # fmt: skip
    print("| Architecture (shape) | Class | Real params | Twin | init s (CPU s) | check s (CPU s) | exit | Findings |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for name in names:
        billions, cls = sizes(name, "tests.checks.hf_shapes")
        r = one(name, args.steps)
        worst = max(worst, r["check_s"])
        print(
            f"| {SHAPES[name]} | {cls} | {billions:.1f}B | {r['twin_m']:.1f}M, {r['twin_layers']} layers | "
            f"{r['init_s']:.1f} ({r['init_cpu_s']:.1f}) | {r['check_s']:.1f} ({r['check_cpu_s']:.1f}) | "
            f"{r['check_rc']} | {', '.join(r['findings']) or 'none'} |",
            flush=True,
        )
    if not args.only:
        p = planted(args.steps)
        print(f"| Llama-3-70B shape with planted hazards (`tests.checks.hf_planted:llama3_70b`) | | | | | "
              f"{p['check_s']:.1f} ({p['check_cpu_s']:.1f}) | {p['check_rc']} | {', '.join(p['findings'])} |")  # fmt: skip
    print(
        f"\nslowest check: {worst:.1f} s (target < 60 s)\ncommand: {COMMAND}"
        + (f" --only {args.only}" if args.only else "")
    )


if __name__ == "__main__":
    main()
