"""One engine start for the restart tests, run as a real process in the test's directory.

`python engine.py CONTRACT [--inductor KEY=VALUE]`: set the Inductor options in code (as an engine would), build the
model, print `check()`'s findings, `enforce()` (which loads `[cache] artifacts` first), run two monitored steps, and
print one JSON line: findings, the violation if enforce refused, the monitor's events and per-region snapshot.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.getcwd())

import contract


class Events:
    """Keeps every monitor event as a dict."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __getattr__(self, level: str) -> Any:
        def log(event: str, **kw: Any) -> None:
            self.events.append({"event": event, "level": level, **kw})

        return log


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("contract")
    parser.add_argument("--inductor", action="append", default=[], help="KEY=JSON value set in code before start")
    args = parser.parse_args()
    import torch._inductor.config
    from warm_model import build, step  # type: ignore[import-not-found]

    import monitor
    from contract.pipeline import check

    for item in args.inductor:
        key, _, value = item.partition("=")
        setattr(torch._inductor.config, key, json.loads(value))
    model = build()
    _, _, findings = check(args.contract, model)
    out: dict[str, Any] = {"findings": [f.to_dict() for f in findings]}
    try:
        binding = contract.enforce(model, args.contract)
    except contract.ContractViolation as exc:
        out["violation"] = [f.to_dict() for f in exc.findings]
        print(json.dumps(out))
        return
    events = Events()
    with monitor.start(binding, serve=False, logger=events) as mon:
        for i in range(2):
            step(model, i)
        out["snapshot"] = mon.snapshot()
    out["events"] = [e for e in events.events if e["event"] in ("cold_compile", "compile", "budget_exceeded")]
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
