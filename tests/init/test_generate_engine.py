"""`compile-contract init` on a model an engine already compiled writes `compiled_by = "engine"` regions with the
settings the engine used, which `check` then verifies as they are."""

from __future__ import annotations

from contract.cli import main
from contract.document.load import load
from tests.init.harness import STEPS, generated, run_under


def test_blocks_the_engine_compiled_become_one_engine_region_with_its_settings(tmp_path, capsys) -> None:
    """torchtitan's per-block compile: `layers.*`, compiled_by engine, fullgraph true, dynamic false; check passes."""
    path, result = generated(tmp_path, "tests.init.models:build_engine_blocks", "tests.init.models:late_shape_step")
    assert result.findings == [], [str(f) for f in result.findings]
    contract, _ = load(path)
    assert contract is not None
    (region,) = contract.regions
    assert (region.module, region.compiled_by, region.backend) == ("layers.*", "engine", "eager")
    assert (region.fullgraph, region.dynamic) == (True, False)
    assert "# layers.*: compiled by the engine (module.compile(), 4 modules)" in path.read_text()
    assert main(["check", str(path)]) == 0, capsys.readouterr().out


def test_a_whole_model_compile_becomes_the_root_region_and_a_monitored_run_breaches_nothing(tmp_path) -> None:
    """`torch.compile(model)`: one root region the engine compiles, recorded from the step, run without a breach."""
    model_ref, step_ref = "tests.init.models:build_engine_whole", "tests.init.models:late_shape_step"
    path, result = generated(tmp_path, model_ref, step_ref)
    assert result.findings == [], [str(f) for f in result.findings]
    contract, _ = load(path)
    assert contract is not None
    assert [(r.module, r.compiled_by) for r in contract.regions] == [("", "engine")]
    snap = run_under(path, model_ref, step_ref, STEPS)
    assert snap[contract.regions[0].name]["compiles"] >= 1 and not any(s["breached"] for s in snap.values())
