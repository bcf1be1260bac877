"""Scenario 2: decode with a growing KV cache (Hugging Face DynamicCache), per-layer regions of a Llama decoder.

Static shapes recompile every token (the monitor shows each recompile and its guard-failure reason, then the
recompile-limit hit); the dynamic contract holds zero recompiles after warm-up; the checker warns about CUDA graphs
with dynamic shapes. Run: `python examples/scenario2_decode.py [--backend eager]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if not __package__:  # run as `python examples/<file>.py`: import from the repository root, never examples/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from examples.scenario_common import check_and_apply, contract_path, print_findings, print_snapshot

STATIC = "contracts/scenario2-decode-static.toml"
DYNAMIC = "contracts/scenario2-decode-dynamic.toml"
CUDAGRAPHS = "contracts/scenario2-decode-cudagraphs.toml"


def run(path: str, backend: str | None, *, warm_tokens: int, tokens: int) -> dict:
    """Check + apply a contract, warm up on one generation, `mark_warm()`, then generate more; the snapshot."""
    import torch

    import monitor
    from examples.scenario_models import build_llama, decode

    torch._dynamo.reset()
    model = build_llama()
    binding, findings = check_and_apply(contract_path(path, backend), model)
    print_findings(findings, "startup findings")
    with monitor.start(binding, serve=False, manual_warmup=True) as mon:
        decode(model, prompt=8, new_tokens=warm_tokens)
        mon.mark_warm()
        warm = mon.snapshot()
        decode(model, prompt=5, new_tokens=tokens, seed=1)
        snap = mon.snapshot()
    print(f"after warm-up ({warm_tokens} tokens): compiles={warm['layers']['compiles']}")
    print(f"after {tokens} more tokens:")
    print_snapshot(snap, reasons=True)
    return snap


def main(argv: list[str] | None = None) -> int:
    """Static vs dynamic contract on the same decode loop, then the CUDA-graphs warning."""
    from contract.pipeline import check
    from examples.scenario_models import build_llama

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="override the contracts' backend (e.g. eager: fast on CPU)")
    parser.add_argument("--tokens", type=int, default=12)
    args = parser.parse_args(argv)
    print(f"== {STATIC}: static shapes, the KV cache grows one token per step")
    static = run(STATIC, args.backend, warm_tokens=2, tokens=args.tokens)
    print(f"\n== {DYNAMIC}: dynamic sequence dimension, CUDA graphs off")
    dynamic = run(DYNAMIC, args.backend, warm_tokens=2, tokens=args.tokens)
    print(f"\n== {CUDAGRAPHS}: startup check only")
    _, _, findings = check(contract_path(CUDAGRAPHS), build_llama())
    print_findings(findings, "startup findings")
    ok = (
        static["layers"]["breached"]
        and dynamic["layers"]["budget_recompiles"] == 0
        and not dynamic["layers"]["breached"]
    )
    print(
        f"\nstatic breached its budget: {static['layers']['breached']}; "
        f"dynamic recompiles after warm-up: {dynamic['layers']['budget_recompiles']}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
