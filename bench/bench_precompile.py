"""Warm restarts that skip tracing: cold vs portable artifacts vs a verified precompiled bundle, per model and region
granularity, each start a fresh process with an empty cache dir.

For each model (the demo decoder, a Hugging Face Llama from a small config) and granularity (`layers`: one region per
decoder layer; `whole`: one region for the whole decoder), it runs `compile-contract warm` twice (once with
`--no-precompile`: the plain artifacts; once as is: the precompiled bundle if its verification held, and the verdict),
then engine starts through `contract.enforce()` + the monitor + one step: **cold** (no artifacts), **artifacts** (the
plain ones), **precompile** (the bundle; enforce switches torch's caching_precompile on where the manifest verified
it). On CPU both warm runs also write the kernel pack (`<artifacts>.kernels`: the C++ kernels torch's artifacts do
not carry) and the artifacts and precompile starts get their kernels from it through enforce, as a CPU fleet would:
the bench copies nothing into the empty cache dirs. Inductor's precompiled header lives outside the cache dir
(`/tmp/torchinductor_<user>/precompiled_headers`) and is shared by every row, cold included. Per start: compile
seconds (the monitor's Dynamo compile seconds plus, for a
precompile hit, the `torch.compile()` wrap that read and installed the entry: the `first_compile` seconds) and process
start to the end of the first step, with cold / this ratios (goals: compile seconds >= 10x lower, first step >= 2x).
Run: `python bench/bench_precompile.py [--model demo|llama|all] [--granularity layers|whole|all] [--step infer|train]
[--device cpu|cuda] [--layers 2 --hidden 128]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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
name = "bench-precompile-{model}-{granularity}"
model = "bench.bench_precompile:build_{model}"
step = "bench.bench_precompile:step_{model}"

[defaults]
backend = "inductor"

[[region]]
name = "{granularity}"
module = "{module}"
dynamic = false

[cache]
dir = "{cache}"
fx_graph_cache = true
autograd_cache = true
min_free_gib = 0.1
manifest = "{name}.json"
{artifacts}

[probe]
enabled = false
"""
MODULES = {("demo", "layers"): "layers.*", ("demo", "whole"): "", ("llama", "layers"): "model.layers.*"}
MODULES[("llama", "whole")] = "model"
GOALS = {"compile": 10.0, "first_step": 2.0}
"""cold / precompile ratios the issue asks for."""


# -- the models and steps the contracts name (device, sizes and step kind from the environment the parent sets) ------
def _device() -> str:
    return os.environ.get("BENCH_DEVICE", "cpu")


def _train() -> bool:
    return os.environ.get("BENCH_STEP", "infer") == "train"


def build_demo() -> Any:
    """The demo decoder on the bench device (train mode for a training step)."""
    from contract.demo import build_model

    return build_model().to(_device()).train(_train())


def step_demo(model: Any, i: int) -> Any:
    """One fixed-shape step of the demo: inference under no_grad, or forward and backward."""
    import torch

    from contract.demo import VOCAB

    tokens = torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(i)).to(_device())
    return _run(lambda: model(tokens))


def build_llama() -> Any:
    """A Hugging Face Llama from a small config (BENCH_LAYERS x BENCH_HIDDEN) on the bench device."""
    from examples.scenario_models import build_llama as build

    layers, hidden = int(os.environ.get("BENCH_LAYERS", "2")), int(os.environ.get("BENCH_HIDDEN", "128"))
    return build(layers=layers, hidden=hidden).to(_device()).train(_train())


def step_llama(model: Any, i: int) -> Any:
    """One full-sequence step (batch 1, 16 tokens, no KV cache): inference, or forward and backward."""
    import torch

    from examples.scenario_models import VOCAB

    ids = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(i)).to(_device())
    return _run(lambda: model(input_ids=ids, use_cache=False).logits)


def _run(forward: Any) -> Any:
    import torch

    if not _train():
        with torch.no_grad():
            return forward()
    out = forward()
    out.float().sum().backward()
    return out


# -- one engine start (child process) ------------------------------------------------------------------------------
def child(contract_path: str) -> None:
    """enforce (loads the artifacts first) + monitor + one step; prints one JSON line with the timings."""
    import torch

    snap, enforce_s, first_step_at = engine_start.start(contract_path, T0, _device())
    firsts = {k: sum(s["first_compiles"][k] for s in snap.values()) for k in ("precompile", "artifacts", "cold")}
    loads = sum(s["first_compile_seconds"]["precompile"] for s in snap.values())
    dynamo = sum(s["compile_seconds"] for s in snap.values())
    result = {
        "to_first_step_s": first_step_at,
        "enforce_s": enforce_s,
        "compile_s": dynamo + loads,
        "dynamo_compile_s": dynamo,
        "precompile_load_s": loads,
        "compiles": sum(s["compiles"] for s in snap.values()),
        "first_compiles": firsts,
        "caching_precompile": bool(getattr(torch._dynamo.config, "caching_precompile", False)),
    }
    print(json.dumps(result))


# -- the parent ------------------------------------------------------------------------------------------------------
def _env(args: argparse.Namespace, cache: Path) -> dict[str, str]:
    return {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_", "TORCH_CACHING_PRECOMPILE"))
        },
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
        "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
        "BENCH_DEVICE": args.device,
        "BENCH_STEP": args.step,
        "BENCH_LAYERS": str(args.layers),
        "BENCH_HIDDEN": str(args.hidden),
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }


def _contract(site: Path, key: tuple[str, str], name: str, cache: str, artifacts: str | None) -> Path:
    path = site / f"{name}-{cache}.toml"
    art = f'artifacts = "{artifacts}"' if artifacts else ""
    model, granularity = key
    text = CONTRACT.format(
        model=model, granularity=granularity, module=MODULES[key], cache=cache, name=name, artifacts=art
    )
    path.write_text(text)
    return path


def _run_cmd(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return engine_start.run(cmd, env, name="bench_precompile", timeout=7200)


def start(args: argparse.Namespace, contract: Path, cache: Path) -> dict[str, Any]:
    """One engine start in a fresh process with an empty cache dir (enforce installs the kernel pack, if any)."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True, mode=0o700)
    return engine_start.timed_child(__file__, contract, _env(args, cache), name="bench_precompile", timeout=7200)


def bench_config(args: argparse.Namespace, key: tuple[str, str], root: Path) -> dict[str, Any]:
    """Both warm runs, then every start of one model and granularity."""
    site = root / "-".join(key)
    site.mkdir()
    t0 = time.perf_counter()
    _run_cmd([CLI, "warm", str(_contract(site, key, "plain", "warm-plain", "plain.bin")), "--no-precompile"],
             _env(args, site / "warm-plain"))  # fmt: skip
    plain_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _run_cmd([CLI, "warm", str(_contract(site, key, "pc", "warm-pc", "pc.bin"))], _env(args, site / "warm-pc"))
    pc_s = time.perf_counter() - t0
    verdict = json.loads((site / "pc.json").read_text())["precompile"]
    starts = {
        "cold": start(args, _contract(site, key, "plain", "run", None), site / "run"),
        "artifacts": start(args, _contract(site, key, "plain", "run", "plain.bin"), site / "run"),
        "precompile": start(args, _contract(site, key, "pc", "run", "pc.bin"), site / "run"),
    }
    return {
        "model": key[0],
        "granularity": key[1],
        "warm_plain_s": plain_s,
        "warm_precompile_s": pc_s,
        "verdict": {k: verdict.get(k) for k in ("verified", "torch", "reason")},
        "kernels": {n: _kernels(site / f"{n}.json") for n in ("plain", "pc")},
        "starts": starts,
    }


def _kernels(manifest: Path) -> str:
    """The manifest's kernel pack in a few words (`8 files, 55745 bytes`), `none` without one."""
    pack = json.loads(manifest.read_text()).get("kernels")
    return f"{len(pack['files'])} files, {pack['bytes']} bytes" if pack else "none"


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """One table: per model and granularity every start, its sources and the cold / this ratios."""
    import torch

    print(
        f"\n{platform.machine()}, {os.cpu_count()} CPUs, device {args.device}, torch {torch.__version__}, "
        f"step {args.step}, {' '.join(sys.argv)}"
    )
    head = (
        f"{'model':<6} {'regions':<7} {'start':<19} {'compile s':>9} {'(load s)':>8} {'1st step s':>10} "
        f"{'first compiles p/a/c':>20} {'cold/this compile':>17} {'cold/this 1st step':>18}"
    )
    print(head)
    for r in results:
        cold = r["starts"]["cold"]
        for name, s in r["starts"].items():
            f = s["first_compiles"]
            print(
                f"{r['model']:<6} {r['granularity']:<7} {name:<19} {s['compile_s']:>9.2f} {s['precompile_load_s']:>8.2f} "
                f"{s['to_first_step_s']:>10.2f} {f['precompile']:>8}/{f['artifacts']}/{f['cold']:<9} "
                f"{cold['compile_s'] / max(s['compile_s'], 1e-9):>16.1f}x "
                f"{cold['to_first_step_s'] / s['to_first_step_s']:>17.1f}x"
            )
        v = r["verdict"]
        said = "verified" if v["verified"] else f"not used: {v['reason']}"
        print(
            f"{r['model']:<6} {r['granularity']:<7} precompile {said} (torch {v['torch']}); warm runs "
            f"{r['warm_plain_s']:.1f} s plain, {r['warm_precompile_s']:.1f} s with the bundle and its verification; "
            f"kernel packs: {r['kernels']['plain']} (plain), {r['kernels']['pc']} (bundle)"
        )
    print(json.dumps(results))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all", choices=["demo", "llama", "all"])
    parser.add_argument("--granularity", default="all", choices=["layers", "whole", "all"])
    parser.add_argument("--step", default="infer", choices=["infer", "train"])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    models = ["demo", "llama"] if args.model == "all" else [args.model]
    grains = ["layers", "whole"] if args.granularity == "all" else [args.granularity]
    with tempfile.TemporaryDirectory(prefix="bench_precompile_") as tmp:
        results = [bench_config(args, (m, g), Path(tmp)) for m in models for g in grains]
    report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
