"""Scenario 3: decoder-level vs layer-level regions, with an engine that warms up batch sizes 1..B.

The same tiny Llama runs under two contracts; the engine warms up every batch size, calls `mark_warm()`, then
serves a shuffled stream of batch sizes with zero recompiles. Prints compile time and graph count per granularity.
Run: `python examples/scenario3_granularity.py [--backend eager] [--max-batch 4]`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if not __package__:  # run as `python examples/<file>.py`: import from the repository root, never examples/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from examples.scenario_common import check_and_apply, contract_path, print_findings

CONTRACTS = {"decoder": "contracts/scenario3-decoder.toml", "layers": "contracts/scenario3-layers.toml"}


@dataclass(kw_only=True)
class Result:
    """What one granularity cost and held."""

    granularity: str
    """`decoder` or `layers`."""
    warmup_s: float
    """Wall time of the warm-up (compiles included)."""
    compile_s: float
    """Seconds spent compiling, as the monitor attributed them."""
    graphs: int
    """Graphs compiled (compile events: first compiles plus recompiles) across the region's instances."""
    graph_breaks: int
    """Graph breaks in those compiles."""
    recompiles_after_warm: int
    """Recompiles counted against the budget after `mark_warm()` (the contract says 0)."""


class Engine:
    """A minimal serving engine: startup check, warm-up over batch sizes 1..B, then steady serving."""

    def __init__(self, contract: str, *, backend: str | None, max_batch: int, logger=None) -> None:
        import monitor
        from examples.scenario_models import build_llama4

        self.model = build_llama4()
        self.binding, findings = check_and_apply(contract_path(contract, backend), self.model)
        print_findings(findings, "startup findings")
        self.max_batch = max_batch
        self.monitor = monitor.start(self.binding, serve=False, manual_warmup=True, logger=logger)

    def warm_up(self) -> float:
        """Run every batch size once, then declare the engine warm; returns the wall time."""
        from examples.scenario_models import forward_batch

        t0 = time.perf_counter()
        for b in range(1, self.max_batch + 1):
            forward_batch(self.model, b)
        self.monitor.mark_warm()
        return time.perf_counter() - t0

    def serve(self, requests: int, seed: int = 0) -> None:
        """Steady state: batch sizes drawn from 1..B."""
        from examples.scenario_models import forward_batch

        rng = random.Random(seed)
        for i in range(requests):
            forward_batch(self.model, rng.randint(1, self.max_batch), seed=i)


def run(granularity: str, *, backend: str | None, max_batch: int, requests: int, logger=None) -> Result:
    """One engine lifetime under one contract."""
    import torch

    torch._dynamo.reset()
    engine = Engine(CONTRACTS[granularity], backend=backend, max_batch=max_batch, logger=logger)
    with engine.monitor as mon:
        warmup_s = engine.warm_up()
        engine.serve(requests)
        snap = mon.snapshot()
    (region,) = [s for name, s in snap.items() if name != "<unclaimed>"]  # compiles outside it have their own entry
    return Result(
        granularity=granularity,
        warmup_s=warmup_s,
        compile_s=region["compile_seconds"],
        graphs=region["compiles"],
        graph_breaks=region["graph_breaks"],
        recompiles_after_warm=region["budget_recompiles"],
    )


def main(argv: list[str] | None = None) -> int:
    """Both granularities, then a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="override the contracts' backend (e.g. eager: fast on CPU)")
    parser.add_argument("--max-batch", type=int, default=4)
    parser.add_argument("--requests", type=int, default=12)
    args = parser.parse_args(argv)
    results = []
    for granularity in CONTRACTS:
        print(f"== {CONTRACTS[granularity]}")
        results.append(run(granularity, backend=args.backend, max_batch=args.max_batch, requests=args.requests))
    print(
        f"\nbackend={args.backend or 'contract'} batch sizes 1..{args.max_batch}, {args.requests} requests after warm-up"
    )
    print(
        f"{'granularity':<12} {'warm-up s':>10} {'compile s':>10} {'graphs':>7} {'breaks':>7} {'recompiles after warm':>22}"
    )
    for r in results:
        print(
            f"{r.granularity:<12} {r.warmup_s:>10.2f} {r.compile_s:>10.2f} {r.graphs:>7} {r.graph_breaks:>7} "
            f"{r.recompiles_after_warm:>22}"
        )
    return 0 if all(r.recompiles_after_warm == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
