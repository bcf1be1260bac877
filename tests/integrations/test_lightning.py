"""The Lightning adapter with the real Lightning on CPU: it enforces at `on_fit_start` (a refusal stops `fit` before any
step), monitors the fit, ends warm-up after N steps and turns a `fail` breach into Lightning's own stop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lightning")

import torch

from contract.document.load import ContractFileError
from contract.integrations.lightning import CompileContract
from contract.pipeline import ContractViolation
from monitor.actions import RecompileBudgetExceeded
from tests.integrations import lightning_models as M
from tests.monitor.conftest import Events

BLOCKS = """
[contract]
name = "tiny"
[defaults]
backend = "eager"
dynamic = false
[[region]]
name = "blocks"
module = "blocks.*"
"""


def fit(callback: CompileContract, lengths: list[int], **kw: object) -> tuple[M.Tiny, object]:
    """Fit a fresh Tiny on batches of these lengths (one step each), one sanity-check batch of the first length."""
    model = M.Tiny()
    trainer = M.trainer([callback], **{"max_steps": len(lengths), "num_sanity_val_steps": 1, **kw})
    trainer.fit(model, M.loader(lengths), M.loader(lengths[:1]))
    return model, trainer


def test_contract_compiled_regions_are_compiled_at_fit_start_and_counted_per_instance(write_contract) -> None:
    """Regions the contract compiles are compiled when the fit starts; the monitor counts each block instance."""
    cb = CompileContract(write_contract(BLOCKS), serve=False, logger=Events())
    model, _ = fit(cb, [4, 4, 4])
    snap = cb.monitor.snapshot()["blocks"]
    assert model.train_steps == 3
    assert snap["instances"] == 2 and snap["compiles"] >= 2
    assert snap["budget_recompiles"] == 0 and not snap["breached"]
    assert cb.session.binding is not None
    assert all(t.compiled is not None for t in cb.session.binding.targets())


def test_the_metrics_land_in_the_registry_given_and_a_reused_callback_fits_again(write_contract) -> None:
    """`registry=` puts the monitor's families in the application's registry (`cb.monitor.registry`, read after the
    fit); a second fit with the same callback replaces them there instead of failing on duplicate series."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    cb = CompileContract(write_contract(BLOCKS), serve=False, registry=registry, logger=Events())
    fit(cb, [4, 4])
    assert cb.monitor.registry is registry
    compiles = cb.monitor.snapshot()["blocks"]["compiles"]
    assert registry.get_sample_value("torch_compile_compiles_total", {"region": "blocks"}) == compiles >= 2
    first = cb.monitor
    fit(cb, [4, 4])
    assert cb.monitor is not first and cb.monitor.registry is registry
    assert registry.get_sample_value("torch_compile_recompile_budget", {"region": "blocks"}) == 0


def test_a_refused_contract_stops_fit_before_any_step_with_the_full_report(write_contract) -> None:
    """A region that matches no module refuses the start: `fit` raises the report before the sanity check or a step."""
    cb = CompileContract(write_contract(BLOCKS.replace('"blocks.*"', '"encoder.*"')), serve=False, logger=Events())
    model = M.Tiny()
    with pytest.raises(ContractViolation) as info:
        M.trainer([cb], max_steps=2, num_sanity_val_steps=1).fit(model, M.loader([4, 4]), M.loader([4]))
    assert model.train_steps == 0 and model.val_steps == 0
    assert any(f.severity == "error" and "encoder.*" in f.message for f in info.value.findings)
    assert "encoder.*" in str(info.value)


def test_a_bad_contract_path_is_a_one_line_error_when_the_callback_is_built(tmp_path: Path) -> None:
    """A contract path that does not exist fails when the callback is built, naming the path, before any trainer."""
    missing = tmp_path / "nope.toml"
    with pytest.raises(ContractFileError, match="no such contract file") as info:
        CompileContract(missing)
    assert str(missing) in str(info.value) and "\n" not in str(info.value)


def test_a_contract_with_document_errors_is_refused_when_the_callback_is_built(write_contract) -> None:
    """A document error (an unknown key) is a located finding when the callback is built."""
    with pytest.raises(ContractViolation) as info:
        CompileContract(write_contract(BLOCKS.replace("dynamic = false", "dynamc = false")))
    assert [f.code for f in info.value.findings] == ["CC001"]
    assert "dynamc" in info.value.findings[0].location


def test_warmup_ends_after_the_configured_number_of_optimizer_steps(write_contract) -> None:
    """A recompile before `warmup_steps` steps is not counted against the budget; the same change after it is."""
    cb = CompileContract(
        write_contract(BLOCKS + "recompile_budget = 5\n"), warmup_steps=2, serve=False, logger=Events()
    )
    fit(cb, [4, 6, 6, 8, 8])
    snap = cb.monitor.snapshot()["blocks"]
    assert snap["recompiles_by_reason"]["shape"] == 2 * 2  # two new lengths, each in both blocks
    assert snap["budget_recompiles"] == 1  # per instance: only the length-8 recompile came after warm-up
    assert not snap["breached"]


def test_a_fail_breach_stops_the_fit_cleanly_after_that_step(write_contract) -> None:
    """A recompile past a `fail` budget stops `fit` after the step it happened in: no exception, no further step or
    validation, the event logged; the breached region is armed and raises if called again."""
    events = Events()
    body = BLOCKS + 'recompile_budget = 0\non_breach = "fail"\n'
    cb = CompileContract(write_contract(body), warmup_steps=2, serve=False, logger=events)
    model, trainer = fit(cb, [4, 4, 4, 6, 6, 6, 6, 6])
    assert cb.stopped_at == 4 and model.train_steps == 4
    assert model.val_steps == 1  # the sanity check only: Lightning's validation-after-stop was skipped
    assert trainer.should_stop  # type: ignore[attr-defined]
    snap = cb.monitor.snapshot()["blocks"]
    assert snap["breached"] and snap["fail_armed"] and snap["on_breach"] == "fail"
    [stopped] = events.named("training_stopped")
    assert stopped["regions"] == ["blocks"] and stopped["step"] == 4 and stopped["engine"] == "lightning"
    [breach] = events.named("budget_exceeded")
    assert breach["action"] == "fail"
    with pytest.raises(RecompileBudgetExceeded):
        model.blocks[0](torch.zeros(1, 6, M.WIDTH))


def test_a_fail_stop_reaches_the_events_file_and_the_report_says_why_the_run_stopped(write_contract, tmp_path) -> None:
    """`training_stopped` goes where the monitor's events go: the `[monitor] events_path` file, whose report names the
    stop (engine, step, breached region) as well as the breach."""
    from monitor.report import write_report

    events_file = tmp_path / "events-{rank}.jsonl"
    body = BLOCKS + f'recompile_budget = 0\non_breach = "fail"\n[monitor]\nevents_path = "{events_file}"\n'
    cb = CompileContract(write_contract(body), warmup_steps=2, serve=False, logger=Events())
    fit(cb, [4, 4, 4, 6, 6, 6])
    lines = [json.loads(line) for line in (tmp_path / "events-0.jsonl").read_text().splitlines()]
    [stopped] = [e for e in lines if e["event"] == "training_stopped"]
    assert (stopped["engine"], stopped["step"], stopped["regions"], stopped["level"]) == (
        "lightning",
        4,
        ["blocks"],
        "error",
    )
    written = write_report([str(tmp_path / "events-0.jsonl")], str(tmp_path / "report"))
    page = Path(written.html).read_text()
    assert 'id="stopped"' in page and "training_stopped" in page and "step 4" in page
    assert any("stopped" in note and "lightning" in note and "blocks" in note for note in written.notes), written.notes


def test_without_a_fail_region_no_stop_is_requested(write_contract) -> None:
    """An `alert` breach is logged and counted; the fit runs every step."""
    body = BLOCKS + "recompile_budget = 0\n"
    events = Events()
    cb = CompileContract(write_contract(body), warmup_steps=1, serve=False, logger=events)
    model, _ = fit(cb, [4, 4, 6, 6])
    assert cb.stopped_at is None and model.train_steps == 4
    assert cb.monitor.snapshot()["blocks"]["breached"]
    assert [e["action"] for e in events.named("budget_exceeded")] == ["alert"]
    assert events.named("training_stopped") == []


def test_warmup_waits_for_the_first_validation_when_there_is_no_sanity_check(write_contract) -> None:
    """Without a sanity check the first validation compiles the regions again (eval, no grad): warm-up lasts until
    it has run, so that recompile never breaches a zero `fail` budget."""
    body = BLOCKS + 'recompile_budget = 0\non_breach = "fail"\n'
    events = Events()
    cb = CompileContract(write_contract(body), warmup_steps=1, serve=False, logger=events)
    model, _ = fit(cb, [4, 4, 4, 4], num_sanity_val_steps=0, val_check_interval=2)
    assert cb.stopped_at is None and model.train_steps == 4 and model.val_steps >= 1
    snap = cb.monitor.snapshot()["blocks"]
    assert snap["recompiles_by_reason"]["global_state"] >= 1 and not snap["breached"]
    assert events.named("monitor_warm")


@pytest.mark.timeout(300)
def test_a_fail_breach_on_one_rank_stops_every_rank_of_a_ddp_fit_at_the_same_step(tmp_path: Path) -> None:
    """Two DDP ranks (gloo); only rank 1's batches change length: both stop after that step, nobody hangs or raises."""
    from tests.distributed.launch import run_plain

    path = tmp_path / "c.toml"
    path.write_text(BLOCKS + 'recompile_budget = 0\non_breach = "fail"\n[distributed]\ntimeout_s = 20\n')
    lengths = {0: "4,4,4,4,4,4", 1: "4,4,4,6,6,6"}
    runs = run_plain(
        ["-m", "tests.integrations.lightning_ddp_worker", str(path)],
        2,
        timeout=240,
        env_for=lambda r: {"LENGTHS": lengths[r]},
    )
    assert [r.returncode for r in runs] == [0, 0], [(r.stdout[-500:], r.stderr[-1500:]) for r in runs]
    results = [json.loads(r.stdout.split("RESULT ", 1)[1].splitlines()[0]) for r in runs]
    assert [r["breached"] for r in results] == [False, True]
    assert [r["stopped_at"] for r in results] == [4, 4]
    assert [r["train_steps"] for r in results] == [4, 4]


STEPS = """
[contract]
name = "tiny"
[defaults]
backend = "eager"
dynamic = false
compiled_by = "engine"
[[region]]
name = "steps"
module = ""
methods = ["training_step", "validation_step"]
"""


def fit_compiled(callback: CompileContract, lengths: list[int]) -> tuple[M.Tiny, object]:
    """Lightning's documented way: `trainer.fit(torch.compile(model))` (it re-wraps the step methods)."""
    model = M.Tiny()
    trainer = M.trainer([callback], max_steps=len(lengths), num_sanity_val_steps=1)
    trainer.fit(torch.compile(model, backend="eager", dynamic=False), M.loader(lengths), M.loader(lengths[:1]))
    return model, trainer


def test_engine_compiled_step_methods_are_verified_and_their_compiles_counted_per_method(write_contract) -> None:
    """`fit(torch.compile(model))`: the step methods Lightning re-wraps are verified against the engine region and
    their compiles (sanity check's validation_step, then training_step) are counted under it."""
    events = Events()
    cb = CompileContract(write_contract(STEPS), serve=False, logger=events)
    model, _ = fit_compiled(cb, [4, 4, 6])
    assert model.train_steps == 3
    compiled = {(e["module"], e["method"]) for e in events.named("compile") if e["region"] == "steps"}
    assert compiled == {("<root>", "training_step"), ("<root>", "validation_step")}
    [recompile] = events.named("recompile")
    assert "size mismatch" in recompile["guard"] and recompile["counted"]
    assert events.named("engine_compile_mismatch") == []


def test_a_fail_breach_in_engine_compiled_steps_stops_the_fit_cleanly(write_contract) -> None:
    """The same stop for a region Lightning compiles: after the step whose recompile breached, no exception."""
    body = STEPS + 'recompile_budget = 0\non_breach = "fail"\n'
    events = Events()
    cb = CompileContract(write_contract(body), warmup_steps=2, serve=False, logger=events)
    model, _ = fit_compiled(cb, [4, 4, 4, 6, 6, 6])
    assert cb.stopped_at == 4 and model.train_steps == 4
    assert [e["regions"] for e in events.named("training_stopped")] == [["steps"]]


def test_an_engine_compile_with_other_settings_stops_fit_before_any_step(write_contract) -> None:
    """The contract says inductor, the user compiled with eager: CC902 naming both values, before the sanity check."""
    cb = CompileContract(write_contract(STEPS.replace('backend = "eager"', 'backend = "inductor"')), serve=False)
    with pytest.raises(ContractViolation) as info:
        fit_compiled(cb, [4, 4])
    [finding] = [f for f in info.value.findings if f.severity == "error"]
    assert finding.code == "CC902" and "'inductor' (contract) vs 'eager' (engine)" in finding.message


def test_a_contract_region_inside_the_engine_compiled_step_is_refused_before_any_step(write_contract) -> None:
    """`fit(torch.compile(model))` with a contract-compiled `blocks.*` region: the step's compile traces the blocks
    into its own graph, so the region would never compile or be counted: refused at start, naming the outer compile."""
    cb = CompileContract(write_contract(BLOCKS), serve=False)
    with pytest.raises(ContractViolation) as info:
        fit_compiled(cb, [4, 4])
    [finding] = [f for f in info.value.findings if f.severity == "error"]
    assert finding.code == "CC903" and "blocks.0.forward" in finding.message and "<root>.forward" in finding.message
