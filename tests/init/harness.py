"""Shared steps of the init tests: generate a contract into a file, run the model under it with the monitor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

import monitor
from contract.binding.apply import apply
from contract.document.load import load
from contract.document.refs import build_model, resolve
from contract.init.generate import Options, generate
from contract.pipeline import check

STEPS = 4


def generated(tmp_path: Path, model_ref: str, step_ref: str | None, steps: int = STEPS) -> tuple[Path, Any]:
    """Run init (eager backend: no Inductor needed to judge Dynamo's behaviour) and write the file."""
    result = generate(Options(model_ref=model_ref, step_ref=step_ref, steps=steps, backend="eager"))
    path = tmp_path / "contract.toml"
    path.write_text(result.text)
    return path, result


def run_under(path: Path, model_ref: str, step_ref: str, steps: int) -> dict[str, dict[str, Any]]:
    """The engine's path: a fresh model, check + apply, the monitor with its default warm-up, the step."""
    model = build_model(model_ref)
    step = resolve(step_ref, "step")
    _, binding, _ = check(path, model)
    assert binding is not None
    apply(binding)
    with monitor.start(binding, serve=False, registry=CollectorRegistry()) as mon:
        for i in range(steps):
            step(model, i)
        return mon.snapshot()


def regions_of(path: Path) -> dict[str, str]:
    contract, findings = load(path)
    assert contract is not None and findings == [], findings
    return {r.name: r.module for r in contract.regions}
