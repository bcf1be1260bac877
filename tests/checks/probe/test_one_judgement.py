"""The startup probe and the runtime monitor are one judgement: fed the same real run, they count the same recompiles
and graph-break sites and reach the same verdict on every budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from prometheus_client import CollectorRegistry
from torch import nn

import monitor
from contract.binding.apply import apply
from contract.binding.resolve import bind
from contract.document.load import load
from contract.pipeline import check
from tests.checks.probe.test_evidence import (
    Counter,
    NestedPrint,
    Temperature,
    TensorBranch,
    TwoSites,
    contract_file,
    fixed_step,
    float_schedule,
    growing_batch,
    int_schedule,
)
from tests.checks.probe.test_skipped_frames import LoopItem

STEPS = 6
RUNS: dict[str, tuple[Callable[[], nn.Module], Callable[[nn.Module, int], Any], dict[str, Any]]] = {
    "int storm": (Counter, int_schedule, {}),
    "float generalizes once": (Temperature, float_schedule, {}),
    "batch grows, static shapes": (Counter, growing_batch, {"dynamic": False}),
    "batch grows, automatic dynamic": (Counter, growing_batch, {}),
    "tensor in an if": (TensorBranch, fixed_step, {}),
    "two sites, budget one": (TwoSites, fixed_step, {"graph_break_budget": 1}),
    "one site reached twice, budget one": (NestedPrint, fixed_step, {"graph_break_budget": 1}),
    "frame skipped for a break in a loop": (LoopItem, fixed_step, {}),
    "clean": (lambda: nn.Sequential(nn.Linear(8, 8), nn.ReLU()), fixed_step, {}),
}


def monitored_run(path: Path, build: Callable[[], nn.Module], step: Callable) -> dict[str, Any]:
    """The same contract applied for real and run under `monitor.start`, as an engine would."""
    contract, _ = load(path)
    binding, _ = bind(contract, seeded(build))
    apply(binding)
    with monitor.start(binding, registry=CollectorRegistry(), logger=_Silent(), serve=False) as mon:
        for i in range(STEPS):
            step(binding.model, i)
        return mon.snapshot()["r"]


def seeded(build: Callable[[], nn.Module]) -> nn.Module:
    """The same weights for every run of a case (a tensor's sign decides TensorBranch's branches)."""
    torch.manual_seed(0)
    return build()


class _Silent:
    def _drop(self, *args: Any, **kwargs: Any) -> None:
        pass

    info = warning = error = debug = _drop


@pytest.mark.parametrize("name", list(RUNS))
def test_probe_and_monitor_count_the_same_and_agree_on_every_budget(name: str, tmp_path: Path) -> None:
    build, step, region = RUNS[name]
    path = contract_file(tmp_path, STEPS, **region)
    _, binding, findings = check(path, seeded(build), step=step)
    codes = {f.code for f in findings if f.code.startswith("CC4")}
    runtime = monitored_run(path, build, step)

    from contract.checks.probe.run import probe

    contract, _ = load(path)
    startup = probe(contract, seeded(build), step, steps=STEPS).regions["r"]
    for key in ("compiles", "recompiles", "budget_recompiles", "graph_breaks", "budget_graph_breaks", "breaches"):
        assert startup[key] == runtime[key], (name, key, startup[key], runtime[key])
    assert bool(codes & {"CC401", "CC406"}) == ("recompile_budget" in runtime["breaches"]), (name, codes)
    assert ("CC403" in codes) == ("graph_break_budget" in runtime["breaches"]), (name, codes)
