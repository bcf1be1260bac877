"""Startup check time on an 80-layer Llama-70B-shaped model built on the `meta` device (no weight memory).

Measures `contract.check.check()` without the probe: load + bind + settings (CC1xx) + cache (CC2xx) + static scan
(CC3xx) + custom-op scan (CC6xx), first call (cold imports included) and the median of repeats, with a per-check
breakdown; then the share of a cold compile it represents, using a small real Inductor compile (one tiny Llama
decoder layer, empty cache) measured in the same run. The small compile is far cheaper than compiling 80 real layers,
so the share printed is an upper bound.
Run: `python bench/bench_startup.py [--repeats 5]`. Target: check < 1 s on 2 cores.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="cc-bench-startup-"))  # cold: empty cache

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

CONTRACT = """\
[contract]
name = "llama70b-meta"
torch = ">=2.11"

[defaults]
backend = "inductor"
recompile_budget = 0
graph_break_budget = 0

[[region]]
name = "layers"
module = "model.layers.*"
dynamic = true

[[region]]
name = "norm"
module = "model.norm"

[cache]
fx_graph_cache = true
autograd_cache = true
"""
COMMAND = "python bench/bench_startup.py"


def build_70b_meta():
    """LlamaForCausalLM with Llama-3-70B's shape, parameters on `meta` (construction is not part of the check)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        hidden_size=8192,
        intermediate_size=28672,
        num_hidden_layers=80,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=128256,
        max_position_embeddings=8192,
    )
    with torch.device("meta"):
        return LlamaForCausalLM(cfg)


def time_check(path: Path, model) -> tuple[float, list]:
    """One full startup check (no probe: no step is passed)."""
    from contract.pipeline import check

    t0 = time.perf_counter()
    _, binding, findings = check(path, model)
    return time.perf_counter() - t0, findings


def per_check(path: Path, model) -> dict[str, float]:
    """Seconds per stage: load, bind, then each registered check."""
    from contract.binding.resolve import bind
    from contract.checks import CHECKS, CheckContext
    from contract.document.load import load

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    contract, _ = load(path)
    out["load"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    binding, _ = bind(contract, model)
    out["bind"] = time.perf_counter() - t0
    ctx = CheckContext(contract=contract, binding=binding)
    for check in CHECKS:
        t0 = time.perf_counter()
        list(check(ctx))
        out[check.__module__.rsplit(".", 1)[-1]] = time.perf_counter() - t0
    return out


def small_cold_compile() -> float:
    """Seconds for the first call of one tiny Llama decoder layer under Inductor with an empty cache."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from examples.scenario_models import build_llama

    layer = build_llama(layers=1).model
    layer.compile(backend="inductor")
    ids = torch.randint(0, 128, (1, 16))
    t0 = time.perf_counter()
    with torch.no_grad():
        layer(input_ids=ids, use_cache=False)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    """Print the figures and the command."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    model = build_70b_meta()
    build_s = time.perf_counter() - t0
    path = Path(tempfile.mkdtemp(prefix="cc-bench-")) / "llama70b.toml"
    path.write_text(CONTRACT)
    first, findings = time_check(path, model)
    runs = [time_check(path, model)[0] for _ in range(args.repeats)]
    samples = [per_check(path, model) for _ in range(args.repeats)]
    stages = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    compile_s = small_cold_compile()
    median = statistics.median(runs)
    layers = sum(1 for name, _ in model.named_modules() if name.startswith("model.layers.") and name.count(".") == 2)
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, torch {torch.__version__}, python {platform.python_version()}"
    )
    print(f"model: LlamaForCausalLM 70B shape on meta, {layers} layers, built in {build_s:.2f} s (not counted)")
    print(f"findings: {len(findings)} ({', '.join(sorted({f.code for f in findings})) or 'none'})")
    print(f"startup check, first call (cold imports): {first:.3f} s")
    print(f"startup check, median of {args.repeats}: {median:.3f} s   target < 1 s: {'PASS' if median < 1 else 'FAIL'}")
    print(
        "per stage, medians (s; check() adds allow-list and sorting): "
        + ", ".join(f"{k}={v:.3f}" for k, v in stages.items())
    )
    print(f"small cold compile (tiny 1-layer LlamaModel, inductor, empty cache): {compile_s:.2f} s")
    print(f"check / small cold compile: {100 * median / compile_s:.1f} % (first call: {100 * first / compile_s:.1f} %)")
    print(f"command: {COMMAND} --repeats {args.repeats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
