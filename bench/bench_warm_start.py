"""Warm starts: cold vs warm local cache vs artifacts-only (empty local cache), and how good the prediction is.

For each model (the demo decoder, a Hugging Face Llama from a small config) it runs, each in a fresh process:
`compile-contract warm` (writes the manifest and the portable artifacts), then three engine starts through
`contract.enforce()` + the monitor: **cold** (an empty cache dir), **warm** (the dir `warm` filled) and
**artifacts** (an empty cache dir, `[cache] artifacts` loaded by `enforce` before anything compiles). It prints, side
by side, the time from process start to the end of the first step and the monitor's compile seconds with the cold /
warm and cold / artifacts ratios (target >= 5x), the check's predicted cold compile seconds against the cold start's
measured ones (target within 25 %), and what reading the manifest adds to a start (`manifest.read`, and `doctor`'s
whole warm-start prediction; target < 50 ms).
Run: `python bench/bench_warm_start.py [--model demo|llama|all] [--device cpu|cuda] [--layers 4 --hidden 256]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages and bench.engine_start
from bench import engine_start  # noqa: E402

CLI = str(Path(sys.executable).parent / "compile-contract")
CONTRACT = """\
[contract]
name = "bench-warm-{model}"
model = "bench.bench_warm_start:build_{model}"
step = "bench.bench_warm_start:step_{model}"

[defaults]
backend = "inductor"

[[region]]
name = "layers"
module = "{layers}"
dynamic = false

[cache]
dir = "{cache}"
fx_graph_cache = true
autograd_cache = true
min_free_gib = 0.1
manifest = "warm.json"
{artifacts}

[probe]
enabled = false
"""
GLOBS = {"demo": "layers.*", "llama": "model.layers.*"}


# -- the models and steps the contracts name (device and sizes from the environment the parent sets) ---------------
def _device() -> str:
    return os.environ.get("BENCH_DEVICE", "cpu")


def build_demo() -> Any:
    """The demo decoder on the bench device."""
    from contract.demo import build_model

    return build_model().to(_device())


def step_demo(model: Any, i: int) -> Any:
    """One fixed-shape inference step of the demo (its tokens on the bench device)."""
    import torch

    from contract.demo import VOCAB

    tokens = torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(i)).to(_device())
    with torch.no_grad():
        return model(tokens)


def build_llama() -> Any:
    """A Hugging Face Llama from a small config (BENCH_LAYERS x BENCH_HIDDEN) on the bench device."""
    from examples.scenario_models import build_llama as build

    layers, hidden = int(os.environ.get("BENCH_LAYERS", "4")), int(os.environ.get("BENCH_HIDDEN", "256"))
    return build(layers=layers, hidden=hidden).to(_device())


def step_llama(model: Any, i: int) -> Any:
    """One full-sequence forward (batch 1, 16 tokens, no KV cache)."""
    import torch

    from examples.scenario_models import VOCAB

    ids = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(i)).to(_device())
    with torch.no_grad():
        return model(input_ids=ids, use_cache=False).logits


# -- one engine start (child process) ------------------------------------------------------------------------------
def child(contract_path: str) -> None:
    """enforce (loads artifacts first) + monitor + one step; prints one JSON line with the timings."""
    snap, enforce_s, first_step_at = engine_start.start(contract_path, T0, _device())
    print(
        json.dumps(
            {
                "to_first_step_s": first_step_at,
                "enforce_s": enforce_s,
                "compile_s": sum(s["compile_seconds"] for s in snap.values()),
                "compiles": sum(s["compiles"] for s in snap.values()),
                "fx": {k: sum(s["cache"]["fx_graph"][k] for s in snap.values()) for k in ("hit", "miss")},
                "cold_compiles": sum(s["cold_compiles"] for s in snap.values()),
            }
        )
    )


# -- the parent ------------------------------------------------------------------------------------------------------
def _env(args: argparse.Namespace, cache: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))},
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
        "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
        "BENCH_DEVICE": args.device,
        "BENCH_LAYERS": str(args.layers),
        "BENCH_HIDDEN": str(args.hidden),
        "PYTHONPATH": str(ROOT),
    }


def _contract(site: Path, model: str, cache: str, artifacts: bool) -> Path:
    path = site / f"{cache}.toml"
    art = 'artifacts = "warm.bin"' if artifacts else ""
    path.write_text(CONTRACT.format(model=model, layers=GLOBS[model], cache=cache, artifacts=art))
    return path


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return engine_start.run(cmd, env, name="bench_warm_start", timeout=3600)


def start(args: argparse.Namespace, contract: Path, cache: Path) -> dict[str, Any]:
    """One engine start in a fresh process; its process wall time is added."""
    return engine_start.timed_child(__file__, contract, _env(args, cache), name="bench_warm_start", timeout=3600)


def read_cost(manifest: Path, contract: Path, repeats: int = 50) -> dict[str, float]:
    """Median ms of `manifest.read` and of doctor's whole warm-start prediction (no torch), in this process."""
    from compile_formats import manifest as mf
    from contract.checks.context import CheckContext
    from contract.checks.warm import check as warm_check
    from contract.document.load import load

    doc, _ = load(contract)
    assert doc is not None
    reads, doctors = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        mf.read(manifest)
        reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        warm_check.doctor_check(CheckContext(contract=doc))
        doctors.append(time.perf_counter() - t0)
    return {"read_ms": statistics.median(reads) * 1e3, "doctor_ms": statistics.median(doctors) * 1e3}


def bench_model(args: argparse.Namespace, model: str, root: Path) -> dict[str, Any]:
    """warm, then the cold, warm and artifacts-only starts of one model."""
    site = root / model
    site.mkdir()
    warm_contract = _contract(site, model, "cache-warm", artifacts=True)
    t0 = time.perf_counter()
    _run([CLI, "warm", str(warm_contract)], _env(args, site / "cache-warm"))
    warm_run_s = time.perf_counter() - t0
    from compile_formats import manifest as mf

    manifest = mf.read(site / "warm.json")
    predicted = manifest.cost().seconds
    cold = start(args, _contract(site, model, "cache-cold", artifacts=False), site / "cache-cold")
    warm = start(args, _contract(site, model, "cache-warm", artifacts=False), site / "cache-warm")
    arts = start(args, _contract(site, model, "cache-art", artifacts=True), site / "cache-art")
    return {
        "model": model,
        "warm_run_s": warm_run_s,
        "predicted_cold_compile_s": predicted,
        "cold": cold,
        "warm": warm,
        "artifacts": arts,
        "manifest_bytes": (site / "warm.json").stat().st_size,
        **read_cost(site / "warm.json", warm_contract),
    }


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """One table: per model the three starts, the ratios, the prediction error, the manifest's cost."""
    print(f"\n{platform.machine()}, {os.cpu_count()} CPUs, device {args.device}, {' '.join(sys.argv)}")
    head = (
        f"{'model':<6} {'start':<10} {'to 1st step s':>13} {'compile s':>10} {'fx hit/miss':>11} "
        f"{'cold/this (1st step)':>21} {'cold/this (compile)':>20}"
    )
    print(head)
    for r in results:
        cold = r["cold"]
        for name in ("cold", "warm", "artifacts"):
            s = r[name]
            print(
                f"{r['model']:<6} {name:<10} {s['to_first_step_s']:>13.2f} {s['compile_s']:>10.2f} "
                f"{s['fx']['hit']:>5}/{s['fx']['miss']:<5} {cold['to_first_step_s'] / s['to_first_step_s']:>20.1f}x "
                f"{cold['compile_s'] / max(s['compile_s'], 1e-9):>19.1f}x"
            )
        err = (r["predicted_cold_compile_s"] - cold["compile_s"]) / cold["compile_s"]
        print(
            f"{r['model']:<6} prediction: {r['predicted_cold_compile_s']:.2f} s predicted vs {cold['compile_s']:.2f} s "
            f"measured cold ({err:+.0%}; target within 25 %); manifest {r['manifest_bytes']} bytes, read "
            f"{r['read_ms']:.2f} ms, doctor's warm-start prediction {r['doctor_ms']:.2f} ms (target < 50 ms); "
            f"warm run {r['warm_run_s']:.1f} s"
        )
    print(json.dumps(results))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all", choices=["demo", "llama", "all"])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    models = ["demo", "llama"] if args.model == "all" else [args.model]
    with tempfile.TemporaryDirectory(prefix="bench_warm_") as tmp:
        results = [bench_model(args, m, Path(tmp)) for m in models]
    report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
