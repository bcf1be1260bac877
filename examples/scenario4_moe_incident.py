"""Scenario 4: the MoE overflow-counter incident (Python-int counters in the router's forward).

The hazard model is refused at startup by the static scan; the fixed model (a buffer counter mutated in place under
no_grad) passes; with the check skipped, the monitor shows the recompile storm, the recompile-limit hit and the
budget breach. Run: `python examples/scenario4_moe_incident.py [--backend eager] [--steps 12]`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if not __package__:  # run as `python examples/<file>.py`: import from the repository root, never examples/
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from examples.scenario_common import contract_path, event_logger, print_findings, print_snapshot

HAZARD = "contracts/demo-hazard.toml"
FIXED = "contracts/demo.toml"


def startup(path: str, build: str, backend: str | None) -> list:
    """The startup check alone: the findings an engine would refuse on."""
    from contract.document.refs import build_model
    from contract.pipeline import check

    _, _, findings = check(contract_path(path, backend), build_model(build))
    return findings


def storm(backend: str | None, steps: int, logger=None) -> dict:
    """Skip the check: apply the hazard contract anyway and serve `steps` steps under the monitor."""
    import torch

    import monitor
    from contract.binding.apply import apply
    from contract.demo import build_hazard_model, step
    from contract.pipeline import check

    torch._dynamo.reset()
    model = build_hazard_model()
    _, binding, _ = check(contract_path(HAZARD, backend), model)
    apply(binding)
    with monitor.start(binding, serve=False, logger=logger) as mon:
        for i in range(steps):
            step(model, i)
        return mon.snapshot()


def main(argv: list[str] | None = None) -> int:
    """Refused, fixed, and what happens in production when nothing refuses it."""
    from contract.findings import has_errors

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="override the contracts' backend (e.g. eager: fast on CPU)")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args(argv)
    print(f"== startup check: {HAZARD} on contract.demo:build_hazard_model")
    hazard = startup(HAZARD, "contract.demo:build_hazard_model", args.backend)
    print_findings(hazard)
    print(f"engine {'REFUSED to start' if has_errors(hazard) else 'would start'}")
    print(f"\n== startup check: {FIXED} on contract.demo:build_model (counter is a buffer, add_ under no_grad)")
    fixed = startup(FIXED, "contract.demo:build_model", args.backend)
    print_findings(fixed)
    print(f"engine {'REFUSED to start' if has_errors(fixed) else 'starts'}")
    print(f"\n== check skipped: hazard model served {args.steps} steps under the monitor")
    snap = storm(args.backend, args.steps, logger=event_logger())
    print_snapshot(snap, reasons=True)
    layers = snap["layers"]
    print(
        f"\nstorm: {layers['recompiles']} recompiles, recompile-limit hits {layers['recompile_limit_hits']}, "
        f"breached {layers['breached']} (on_breach={layers['on_breach']})"
    )
    return 0 if layers["breached"] and not has_errors(fixed) else 1


if __name__ == "__main__":
    sys.exit(main())
