"""Scenario 1: per-submodule compile settings from one contract instead of ad-hoc `@torch.compiler.disable`.

One part stays eager with a reason, one compiles with `dynamic = true`, one with a non-default Inductor mode, one
compiles only its `score` method; the default contract compiles exactly like a plain per-module `compile()`.
Run: `python examples/scenario1_per_region.py [--backend eager]`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

if not __package__:  # run as `python examples/<file>.py`: import from the repository root, never examples/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from examples.scenario_common import check_and_apply, contract_path, print_findings, print_snapshot

PER_REGION = "contracts/scenario1-per-region.toml"
DEFAULT = "contracts/scenario1-default.toml"


def run_per_region(backend: str | None) -> dict:
    """Apply the per-region contract under the monitor and feed batches of growing sequence length."""
    import torch

    import monitor
    from examples.scenario_models import build_pipeline, pipeline_inputs

    torch._dynamo.reset()
    model = build_pipeline()
    binding, findings = check_and_apply(contract_path(PER_REGION, backend), model)
    print_findings(findings, "startup findings")
    for name, rb in binding.regions.items():
        r = rb.region
        print(
            f"  region {name:<10} state={rb.state:<8} methods={','.join(r.methods):<8} "
            f"dynamic={r.dynamic} mode={r.mode} reason={r.reason}"
        )
    with monitor.start(binding, serve=False) as mon, torch.no_grad():
        for x in pipeline_inputs():
            model(x)
        snap = mon.snapshot()
    print_snapshot(snap)
    return snap


def compile_counts(use_contract: bool, backend: str) -> Counter:
    """Compiles per function name over the same inputs: via the default contract, or plain `module.compile()`."""
    import torch
    from torch._dynamo.utils import get_compilation_metrics

    from examples.scenario_models import build_pipeline, pipeline_inputs

    torch._dynamo.reset()
    seen = {id(m) for m in get_compilation_metrics()}  # the record deque outlives reset(): count only new ones
    model = build_pipeline()
    if use_contract:
        check_and_apply(contract_path(DEFAULT, backend), model)
    else:
        model.encoder.compile(backend=backend)
        model.head.compile(backend=backend)
    with torch.no_grad():
        for x in pipeline_inputs():
            model(x)
    return Counter(
        f"{m.co_name}@{m.co_firstlineno}" for m in get_compilation_metrics() if m.co_name and id(m) not in seen
    )


def main(argv: list[str] | None = None) -> int:
    """Per-region settings under the monitor, then the default contract against a plain compile."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="override the contracts' backend (e.g. eager: fast on CPU)")
    args = parser.parse_args(argv)
    print(f"== {PER_REGION}")
    snap = run_per_region(args.backend)
    backend = args.backend or "inductor"
    via_contract, plain = compile_counts(True, backend), compile_counts(False, backend)
    print(f"\n== {DEFAULT} vs plain module.compile(backend={backend!r}), same inputs")
    print(f"  contract: {dict(via_contract)}\n  plain:    {dict(plain)}")
    same = via_contract == plain
    ok = (
        same
        and snap["preprocess"]["compiles"] == 0
        and snap["encoder"]["recompiles"] == 0
        and snap["sampler"]["compiles"] >= 1
    )
    print(
        f"\nidentical compiles: {same}; preprocess kept eager: {snap['preprocess']['compiles'] == 0}; "
        f"encoder one graph for all lengths: {snap['encoder']['recompiles'] == 0}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
