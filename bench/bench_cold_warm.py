"""Cold vs warm start with a persistent Inductor cache: time to the first generation of the decode scenario.

Each start is a fresh process (in-process caches would hide the cost) launched the way the cache checks (CC2xx)
require: `TORCHINDUCTOR_CACHE_DIR` and the FX/AOT cache switches exported before Python starts, and a contract whose
`[cache]` table names that directory. Start 1 runs with an empty directory (cold), the next ones reuse it (warm).
The model is a tiny Llama with per-layer regions and the scenario-2 dynamic contract; on CUDA when available.
Run: `python bench/bench_cold_warm.py [--device auto|cpu|cuda] [--warm-runs 2] [--layers 4 --hidden 256]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = """\
[contract]
name = "bench-cold-warm"
torch = ">=2.11"

[defaults]
backend = "inductor"
recompile_budget = 0
graph_break_budget = 0

[[region]]
name = "layers"
module = "model.layers.*"
dynamic = true

[cache]
dir = "{cache_dir}"
fx_graph_cache = true
autograd_cache = true
"""


def child(args: argparse.Namespace) -> None:
    """One engine start: check, apply, monitor, time the first generation; prints one JSON line."""
    sys.path.insert(0, str(ROOT))
    t_import = time.perf_counter()
    import torch

    import monitor
    from contract.binding.apply import apply
    from contract.pipeline import check
    from examples.scenario_models import build_llama, decode

    device = args.device
    model = build_llama(layers=args.layers, hidden=args.hidden).to(device)
    _, binding, findings = check(Path(args.contract), model)
    apply(binding)
    with monitor.start(binding, serve=False, logger=_Null()) as mon:
        t0 = time.perf_counter()
        decode(model, prompt=16, new_tokens=args.tokens)
        if device == "cuda":
            torch.cuda.synchronize()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        decode(model, prompt=16, new_tokens=args.tokens, seed=1)
        if device == "cuda":
            torch.cuda.synchronize()
        steady = time.perf_counter() - t0
        layers = mon.snapshot()["layers"]
    print(
        json.dumps(
            {
                "first_generation_s": first,
                "steady_generation_s": steady,
                "compile_s": layers["compile_seconds"],
                "compiles": layers["compiles"],
                "cache": layers["cache"],
                "findings": sorted({f.code for f in findings}),
                "since_import_s": time.perf_counter() - t_import,
                "torch": torch.__version__,
                "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
            }
        )
    )


class _Null:
    """Drops monitor log events (the benchmark measures compile time, not log I/O)."""

    def __getattr__(self, name: str):
        return lambda *a, **k: None


def start(args: argparse.Namespace, contract: Path, cache_dir: Path) -> dict:
    """Launch one child process with the cache discipline exported in its environment."""
    env = dict(
        os.environ,
        TORCHINDUCTOR_CACHE_DIR=str(cache_dir),
        TORCHINDUCTOR_FX_GRAPH_CACHE="1",
        TORCHINDUCTOR_AUTOGRAD_CACHE="1",
        PYTHONPATH=str(ROOT),
    )
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--contract",
        str(contract),
        "--device",
        args.device,
        "--layers",
        str(args.layers),
        "--hidden",
        str(args.hidden),
        "--tokens",
        str(args.tokens),
    ]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"bench_cold_warm: child failed (rc={out.returncode}):\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


def main(argv: list[str] | None = None) -> int:
    """Cold start, then warm starts, then the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--warm-runs", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--cache-root", default=None, help="where to create the cache directory (default: a temp dir)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--contract", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    if args.device == "auto":
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    work = Path(tempfile.mkdtemp(prefix="cc-cold-warm-", dir=args.cache_root))
    cache_dir = work / "inductor-cache"
    cache_dir.mkdir()
    contract = work / "contract.toml"
    contract.write_text(CONTRACT.format(cache_dir=cache_dir))
    cold = start(args, contract, cache_dir)
    warm = [start(args, contract, cache_dir) for _ in range(args.warm_runs)]
    best = min(warm, key=lambda r: r["first_generation_s"])
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, device {args.device} {cold['gpu'] or ''}, "
        f"torch {cold['torch']}"
    )
    print(
        f"model: tiny Llama {args.layers} layers hidden {args.hidden}, per-layer regions, dynamic contract; "
        f"prefill 16 + {args.tokens} tokens; startup findings {cold['findings'] or 'none'}"
    )
    for name, r in [("cold", cold), *((f"warm{i + 1}", w) for i, w in enumerate(warm))]:
        print(
            f"{name:<6} first generation {r['first_generation_s']:7.2f} s  compile {r['compile_s']:7.2f} s  "
            f"compiles {r['compiles']}  fx cache {r['cache']['fx_graph']}  aot cache {r['cache']['aot_autograd']}  "
            f"steady generation {r['steady_generation_s']:.3f} s  process {r['process_wall_s']:.1f} s"
        )
    print(
        f"cold / warm first generation: {cold['first_generation_s'] / best['first_generation_s']:.1f}x "
        f"({cold['first_generation_s']:.2f} s -> {best['first_generation_s']:.2f} s)"
    )
    print(
        f"command: python bench/bench_cold_warm.py --device {args.device} --warm-runs {args.warm_runs} "
        f"--layers {args.layers} --hidden {args.hidden} --tokens {args.tokens}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
