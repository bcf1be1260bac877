"""Scenario 1: per-submodule compile settings from one contract."""

from __future__ import annotations

import torch

import monitor
from examples.scenario1_per_region import PER_REGION, compile_counts
from examples.scenario_common import check_and_apply, contract_path
from examples.scenario_models import build_pipeline, pipeline_inputs


def test_each_part_gets_its_own_settings_and_results_match_eager(quiet_logger) -> None:
    model, reference = build_pipeline(), build_pipeline()
    binding, findings = check_and_apply(contract_path(PER_REGION), model)
    assert not findings
    states = {name: rb.state for name, rb in binding.regions.items()}
    assert states == {"preprocess": "disabled", "encoder": "compiled", "head": "compiled", "sampler": "compiled"}
    assert binding.regions["head"].region.compile_kwargs()["mode"] == "max-autotune-no-cudagraphs"
    with monitor.start(binding, serve=False, logger=quiet_logger) as mon, torch.no_grad():
        for x in pipeline_inputs(3):
            assert model(x) == reference(x)
        snap = mon.snapshot()
    assert snap["preprocess"]["compiles"] == 0
    assert snap["encoder"]["compiles"] == 1 and snap["encoder"]["recompiles"] == 0
    assert snap["sampler"]["compiles"] == 1
    assert [t.method for t in binding.regions["sampler"].targets] == ["score"]
    assert "forward" not in vars(model.sampler)


def test_default_contract_compiles_exactly_like_plain_module_compile() -> None:
    assert compile_counts(True, "eager") == compile_counts(False, "eager")
    assert sum(compile_counts(True, "eager").values()) >= 2
