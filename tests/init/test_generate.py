"""`compile-contract init` on real models: the generated contract loads cleanly, passes `check` unchanged (the probe
included), its regions are the expected globs, and the model run under it with the monitor breaches nothing."""

from __future__ import annotations

import pytest

from contract.cli import main
from contract.document.load import load
from contract.document.refs import build_model
from contract.pipeline import check
from tests.init.harness import STEPS, generated, regions_of, run_under

CASES = {
    "demo": ("contract.demo:build_model", "contract.demo:step", {"layers": "layers.*", "lm_head": "lm_head"}),
    "scenario1": (
        "examples.scenario_models:build_pipeline",
        "examples.scenario_models:pipeline_step",
        {"encoder": "encoder", "head": "head"},
    ),
    "scenario5-kernel": (
        "examples.scenario5_kernels:build_kernel_model",
        "examples.scenario5_kernels:kernel_step",
        {"blocks": "blocks.*"},
    ),
    "scenario5-item": (
        "examples.scenario5_kernels:build_item_model",
        "examples.scenario5_kernels:kernel_step",
        {"blocks": "blocks.*"},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_generated_contract_passes_check_and_a_monitored_run_breaches_nothing(case: str, tmp_path, capsys) -> None:
    model_ref, step_ref, regions = CASES[case]
    path, result = generated(tmp_path, model_ref, step_ref)
    assert result.findings == [], [str(f) for f in result.findings]
    assert regions_of(path) == regions
    assert main(["check", str(path)]) == 0, capsys.readouterr().out
    snap = run_under(path, model_ref, step_ref, STEPS)
    assert not any(s["breached"] for s in snap.values()), snap
    assert all(s["compiles"] > 0 for s in snap.values()), snap


def test_a_shape_change_in_warm_up_is_absorbed_by_warmup_compiles_and_suggests_dynamic_dims(tmp_path) -> None:
    path, result = generated(
        tmp_path, "examples.scenario_models:build_pipeline", "examples.scenario_models:pipeline_step", steps=6
    )
    contract, _ = load(path)
    assert contract is not None
    by_name = {r.name: r for r in contract.regions}
    assert by_name["encoder"].warmup_compiles == 2 and by_name["encoder"].recompile_budget == 0
    text = path.read_text()
    assert "# dynamic_dims = { x = [1] }" in text and "size mismatch at index 1" in text
    snap = run_under(path, "examples.scenario_models:build_pipeline", "examples.scenario_models:pipeline_step", 6)
    assert snap["encoder"]["recompiles"] == 1 and not snap["encoder"]["breached"]


def test_graph_break_sites_set_the_budget_and_are_listed_with_their_reason(tmp_path) -> None:
    path, _ = generated(
        tmp_path, "examples.scenario5_kernels:build_item_model", "examples.scenario5_kernels:kernel_step"
    )
    contract, _ = load(path)
    assert contract is not None and contract.regions[0].graph_break_budget == 1
    text = path.read_text()
    assert "1 distinct graph-break site per instance" in text
    assert "examples/scenario5_kernels.py:" in text and "Tensor.item()" in text


def test_compile_seconds_are_written_as_a_measured_comment(tmp_path) -> None:
    path, _ = generated(tmp_path, "contract.demo:build_model", "contract.demo:step")
    measured = [line for line in path.read_text().splitlines() if line.startswith("# measured (eager, this machine)")]
    assert len(measured) == 2 and all("first compile" in line and " s" in line for line in measured)


def test_the_hazard_demo_contract_carries_the_hazard_as_a_reported_finding(tmp_path) -> None:
    path, result = generated(tmp_path, "contract.demo:build_hazard_model", "contract.demo:step")
    codes = {f.code for f in result.findings}
    assert {"CC301", "CC401"} <= codes
    text = path.read_text()
    region = text[: text.index('name = "layers"')]
    assert "# finding CC301 (error) at contract/demo.py:64" in region
    assert "NOT SETTLED" in text
    _, _, findings = check(path, build_model("contract.demo:build_hazard_model"))
    assert "CC301" in {f.code for f in findings}


def test_without_a_step_the_model_is_read_on_the_meta_device_and_the_contract_passes_check(tmp_path, capsys) -> None:
    path, result = generated(tmp_path, "contract.demo:build_model", None)
    assert "meta device" in result.notes[0]
    text = path.read_text()
    assert "step =" not in text and "warmup_compiles = 1" in text
    assert main(["check", str(path)]) == 0, capsys.readouterr().out
