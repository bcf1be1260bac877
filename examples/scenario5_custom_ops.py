"""Scenario 5: opaque custom kernels (`torch.library.custom_op`) and graph breaks under `graph_break_budget = 0`.

The block whose kernel has a fake implementation compiles with 0 graph breaks; the same block with `.item()` is
reported by the monitor with the break reason; the kernel without a fake implementation is refused at startup by the
scan (CC601, an error: the hot path calls it on every call, so the first compiled call fails for certain), by the
probe too once it runs the contract's step (CC407: the compile fails), and, if started anyway, fails its first
compiled call.
Run: `python examples/scenario5_custom_ops.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if not __package__:  # run as `python examples/<file>.py`: import from the repository root, never examples/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from examples.scenario_common import check_and_apply, contract_path, event_logger, print_findings, print_snapshot

VARIANTS = {
    "kernel": ("contracts/scenario5-kernel.toml", "custom op with a fake implementation"),
    "item": ("contracts/scenario5-item.toml", "same block with .item() on the hot path"),
    "nofake": ("contracts/scenario5-nofake.toml", "custom op without a fake implementation"),
}


def run(variant: str, backend: str | None, steps: int = 3, logger=None) -> tuple[list, dict, str | None]:
    """Startup findings, the monitor snapshot after `steps` steps, and the first error a step raised (if any); the
    refused variant (nofake) is started anyway, to show what its first request meets."""
    import torch

    import monitor
    from contract.document.refs import build_model
    from examples.scenario5_kernels import kernel_step

    torch._dynamo.reset()
    path = contract_path(VARIANTS[variant][0], backend)
    model = build_model(f"examples.scenario5_kernels:build_{variant}_model")
    binding, findings = check_and_apply(path, model, refuse=variant != "nofake")
    error = None
    with monitor.start(binding, serve=False, logger=logger) as mon:
        try:
            for i in range(steps):
                kernel_step(model, i)
        except Exception as exc:  # what the engine would see on its first request
            error = f"{type(exc).__name__}: {_first_line(exc)}"
        return findings, mon.snapshot(), error


def probe_findings(variant: str, backend: str | None) -> list:
    """Startup findings with the dynamic probe running the contract's step (what `enforce(..., step=...)` checks)."""
    import torch

    from contract.document.refs import build_model
    from contract.pipeline import check
    from examples.scenario5_kernels import kernel_step

    torch._dynamo.reset()
    model = build_model(f"examples.scenario5_kernels:build_{variant}_model")
    _, _, findings = check(contract_path(VARIANTS[variant][0], backend), model, step=kernel_step)
    return findings


def _first_line(exc: BaseException) -> str:
    """The informative part of a Dynamo error (it wraps the kernel's own message)."""
    import re

    text = str(exc)
    found = re.search(r"There was no fake impl registered for [^.]*", text)
    if found:
        return found.group(0)
    return text.splitlines()[0][:200] if text else ""


def main(argv: list[str] | None = None) -> int:
    """All three variants, then what each showed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="override the contracts' backend (e.g. eager: fast on CPU)")
    args = parser.parse_args(argv)
    results = {}
    for variant, (path, what) in VARIANTS.items():
        print(f"\n== {path}: {what}")
        log = event_logger(echo=False)
        findings, snap, error = run(variant, args.backend, logger=log)
        print_findings(findings, "startup findings")
        print_snapshot(snap)
        for event in (e for e in log.events if e["event"] in ("graph_break", "budget_exceeded")):
            print(f"  monitor {event['event']}: {str(event.get('reason') or event.get('budget_kind'))[:160]}")
        if error:
            print(f"  first request failed: {error}")
        results[variant] = (findings, snap, error)
    refused = [f for f in probe_findings("nofake", args.backend) if f.code == "CC407"]
    print_findings(refused, "\n== nofake with the probe running the step")
    ok = (
        results["kernel"][1]["blocks"]["graph_breaks"] == 0
        and not results["kernel"][1]["blocks"]["breached"]
        and results["item"][1]["blocks"]["graph_breaks"] > 0
        and results["item"][1]["blocks"]["breached"]
        and any(f.code == "CC601" and f.severity == "error" for f in results["nofake"][0])
        and results["nofake"][2] is not None
        and bool(refused)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
