"""The Hugging Face Trainer adapter with the real transformers and accelerate on CPU (a tiny Llama): it enforces at
`on_train_begin` on the Trainer's model, monitors training, ends warm-up after N steps and the first evaluation, and
turns a `fail` breach into the Trainer's own stop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import torch

from contract.integrations.hf import CompileContractCallback
from contract.pipeline import ContractViolation
from monitor.actions import RecompileBudgetExceeded
from tests.integrations import hf_setup
from tests.monitor.conftest import Events

LAYERS = """
[contract]
name = "tiny-llama"
[defaults]
backend = "eager"
dynamic = false
[[region]]
name = "layers"
module = "model.layers.*"
"""
FAIL = 'recompile_budget = 0\non_breach = "fail"\n'


def attach(trainer, path: Path, **kw) -> CompileContractCallback:
    """The documented way: build the callback with its Trainer and add it."""
    cb = CompileContractCallback(path, trainer, serve=False, **kw)
    trainer.add_callback(cb)
    return cb


def test_contract_compiled_layers_are_compiled_when_training_begins_and_counted(tmp_path, write_contract) -> None:
    """Without `torch_compile` the contract compiles the decoder layers in place; every step runs, counted."""
    trainer = hf_setup.trainer(tmp_path, [8, 8, 8])
    cb = attach(trainer, write_contract(LAYERS), logger=Events())
    trainer.train()
    snap = cb.monitor.snapshot()["layers"]
    assert trainer.state.global_step == 3
    assert snap["compiles"] >= 1 and snap["budget_recompiles"] == 0 and not snap["breached"]
    assert cb.session.binding is not None and len(cb.session.binding.targets()) == 2
    assert all(t.compiled is not None for t in cb.session.binding.targets())


def test_a_refused_contract_stops_train_before_any_step_with_the_full_report(tmp_path, write_contract) -> None:
    """A region that matches no module refuses the start: `train()` raises the report, no step has run."""
    trainer = hf_setup.trainer(tmp_path, [8, 8])
    attach(trainer, write_contract(LAYERS.replace("model.layers.*", "model.encoder.*")), logger=Events())
    with pytest.raises(ContractViolation) as info:
        trainer.train()
    assert trainer.state.global_step == 0
    assert any(f.severity == "error" and "model.encoder.*" in f.message for f in info.value.findings)


def test_a_callback_built_with_another_trainer_is_refused_before_any_step(tmp_path, write_contract) -> None:
    """The callback reads the compiled model from its Trainer: one built with another Trainer is an error at once."""
    path = write_contract(LAYERS)
    trainer, other = hf_setup.trainer(tmp_path, [8]), hf_setup.trainer(tmp_path, [8])
    trainer.add_callback(CompileContractCallback(path, other, serve=False, logger=Events()))
    with pytest.raises(ValueError, match="built with another Trainer"):
        trainer.train()
    assert trainer.state.global_step == 0


def test_a_fail_breach_stops_training_cleanly_after_that_step(tmp_path, write_contract) -> None:
    """A new sequence length past a `fail` budget stops `train()` after that step: no exception, the event logged;
    the breached layers are armed and raise if called again."""
    events = Events()
    trainer = hf_setup.trainer(tmp_path, [8, 8, 8, 12, 12, 12])
    cb = attach(trainer, write_contract(LAYERS + FAIL), warmup_steps=2, logger=events)
    trainer.train()
    assert cb.stopped_at == 4 and trainer.state.global_step == 4
    [stopped] = events.named("training_stopped")
    assert stopped["regions"] == ["layers"] and stopped["engine"] == "hf_trainer"
    snap = cb.monitor.snapshot()["layers"]
    assert snap["breached"] and snap["fail_armed"]
    with pytest.raises(RecompileBudgetExceeded):
        trainer.model(torch.ones(1, 12, dtype=torch.long))


def test_warmup_waits_for_the_first_evaluation_of_the_run(tmp_path, write_contract) -> None:
    """Evaluation compiles the layers again (eval mode, no grad): warm-up lasts until it has run, so that recompile
    never breaches a zero `fail` budget."""
    events = Events()
    trainer = hf_setup.trainer(tmp_path, [8, 8, 8, 8], eval_lengths=[8], eval_strategy="steps", eval_steps=2)
    cb = attach(trainer, write_contract(LAYERS + FAIL), warmup_steps=1, logger=events)
    trainer.train()
    assert cb.stopped_at is None and trainer.state.global_step == 4
    snap = cb.monitor.snapshot()["layers"]
    assert snap["recompiles"] >= 1 and not snap["breached"]
    assert events.named("monitor_warm")


ENGINE = """
[contract]
name = "tiny-llama"
[defaults]
backend = "eager"
compiled_by = "engine"
[[region]]
name = "{name}"
module = "{module}"
"""


def compiled_trainer(tmp_path, lengths, monkeypatch, *, regional: bool):
    """`TrainingArguments(torch_compile=True)` with the eager backend; accelerate's regional compilation when asked
    (its plugin reads ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION when the Trainer builds its accelerator)."""
    if regional:
        monkeypatch.setenv("ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION", "1")
    return hf_setup.trainer(tmp_path, lengths, torch_compile=True, torch_compile_backend="eager")


def test_torch_compile_true_whole_model_is_verified_and_its_recompile_counted_with_the_guard(
    tmp_path, write_contract, monkeypatch
) -> None:
    """`torch_compile=True`: accelerate compiles the whole model at `trainer.model_wrapped`; the engine region over
    the model is verified there and a new sequence length is a recompile under it, with the guard that failed."""
    events = Events()
    trainer = compiled_trainer(tmp_path, [8, 8, 12], monkeypatch, regional=False)
    cb = attach(trainer, write_contract(ENGINE.format(name="model", module="")), logger=events)
    trainer.train()
    assert trainer.model_wrapped is not trainer.model and trainer.state.global_step == 3
    snap = cb.monitor.snapshot()["model"]
    assert snap["compiles"] == snap["recompiles"] + 1 and snap["recompiles"] >= 1
    [recompile] = events.named("recompile")
    assert "input_ids" in recompile["guard"] and "size mismatch" in recompile["guard"]
    assert events.named("engine_compile_mismatch") == []


def test_accelerate_regional_compilation_is_verified_per_layer_and_the_other_leaves_are_unclaimed(
    tmp_path, write_contract, monkeypatch
) -> None:
    """Regional compilation compiles each decoder layer (the region) and every other leaf (embeddings, norm, head)
    on a copy of the tree: the layers verify and count under the region, the rest as unclaimed compiles."""
    events = Events()
    trainer = compiled_trainer(tmp_path, [8, 8], monkeypatch, regional=True)
    cb = attach(trainer, write_contract(ENGINE.format(name="layers", module="model.layers.*")), logger=events)
    trainer.train()
    assert trainer.model_wrapped is not trainer.model  # accelerate's shallow copy holds the compiled layers
    snap = cb.monitor.snapshot()["layers"]
    assert snap["compiles"] >= 1 and not snap["breached"]
    unclaimed = cb.monitor.ledger.totals()["unclaimed"]
    assert unclaimed["compiles"] >= 1 and "LlamaRMSNorm.forward" in unclaimed["codes"]


def test_torch_compile_with_another_backend_than_the_contract_stops_train_before_any_step(
    tmp_path, write_contract, monkeypatch
) -> None:
    """The contract says inductor, `torch_compile_backend` eager: CC902 naming both values; no step has run."""
    trainer = compiled_trainer(tmp_path, [8, 8], monkeypatch, regional=False)
    body = ENGINE.format(name="model", module="").replace('backend = "eager"', 'backend = "inductor"')
    attach(trainer, write_contract(body), logger=Events())
    with pytest.raises(ContractViolation) as info:
        trainer.train()
    assert trainer.state.global_step == 0
    [finding] = [f for f in info.value.findings if f.severity == "error"]
    assert finding.code == "CC902" and "'inductor' (contract) vs 'eager' (engine)" in finding.message


@pytest.mark.timeout(400)
def test_a_fail_breach_in_one_process_stops_every_process_of_a_ddp_run_at_the_same_step(tmp_path: Path) -> None:
    """Two processes (gloo, accelerate's MULTI_CPU); only process 1 meets a new length (at its third step: the
    distributed sampler gives it items 1, 3, 5): both stop after that step through accelerate's trigger."""
    from tests.distributed.launch import run_plain

    path = tmp_path / "c.toml"
    path.write_text(LAYERS + FAIL + "[distributed]\ntimeout_s = 20\n")
    lengths = {0: "8,8,8,8,8,8", 1: "8,8,8,8,12,12"}
    runs = run_plain(
        ["-m", "tests.integrations.hf_ddp_worker", str(path)],
        2,
        timeout=300,
        env_for=lambda r: {"LENGTHS": lengths[r], "OUT_DIR": str(tmp_path)},
    )
    assert [r.returncode for r in runs] == [0, 0], [(r.stdout[-500:], r.stderr[-1500:]) for r in runs]
    results = [json.loads(r.stdout.split("RESULT ", 1)[1].splitlines()[0]) for r in runs]
    assert [r["processes"] for r in results] == [2, 2]
    assert [r["breached"] for r in results] == [False, True]
    assert [r["stopped_at"] for r in results] == [3, 3] and [r["global_step"] for r in results] == [3, 3]
