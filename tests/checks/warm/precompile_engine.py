"""One engine start for the precompile tests, run as a real process in the test's directory.

`python precompile_engine.py CONTRACT [--model REF] [--unseen N]`: `enforce()` (which loads `[cache] artifacts` and
switches precompile on where the manifest verified it), the warm run's two steps under the monitor, then N calls with
batch sizes the warm run never saw (5, 6, ...); prints one JSON line: whether precompile was
on, the monitor's events, its snapshot and its first-compile metric lines, or the exception that escaped.
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
    parser.add_argument("--model", default="precompile_model:build")
    parser.add_argument("--unseen", type=int, default=0)
    args = parser.parse_args()
    import torch
    from precompile_model import step  # type: ignore[import-not-found]
    from prometheus_client import generate_latest

    import monitor
    from contract.document.refs import build_model

    model = build_model(args.model)
    binding = contract.enforce(model, args.contract)
    out: dict[str, Any] = {"precompile": bool(torch._dynamo.config.caching_precompile)}
    events = Events()
    with monitor.start(binding, serve=False, logger=events) as mon:
        try:
            for i in range(2):
                step(model, i)
            with torch.no_grad():
                for n in range(args.unseen):
                    model(torch.randn(5 + n, 8))
        except Exception as exc:  # the crash the tests prove never happens
            out["crash"] = f"{type(exc).__name__}: {exc}"
        out["snapshot"] = mon.snapshot()
        text = generate_latest(mon.registry).decode()
    out["metrics"] = [line for line in text.splitlines() if line.startswith("torch_compile_first_compile")]
    out["events"] = events.events
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
