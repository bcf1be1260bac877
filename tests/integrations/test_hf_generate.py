"""Hugging Face `generate()` compiling itself (static cache; forced on CPU through the compile config) under
`GenerateContract`: the compile is verified at its first compile and counted under the region over the model;
a new prompt length is a recompile with its guard; a `fail` breach lets the call in flight finish."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import torch

from contract.integrations.hf import GenerateContract
from contract.pipeline import ContractViolation
from monitor.actions import RecompileBudgetExceeded
from tests.checks import hf_models
from tests.monitor.conftest import Events

MODEL = """
[contract]
name = "tiny-llama-generate"
[defaults]
backend = "eager"
compiled_by = "engine"
verify_at = "first_compile"
[[region]]
name = "model"
module = ""
"""


def compile_config():
    """HF's CompileConfig with the eager backend, its automatic compile allowed on CPU (`_compile_all_devices`)."""
    from transformers import CompileConfig

    config = CompileConfig(backend="eager", mode="default")
    config._compile_all_devices = True
    return config


def generate(watch: GenerateContract, prompt_length: int, config) -> torch.Tensor:
    """Greedy decoding of 4 tokens with a static cache (what makes generate() compile its forward)."""
    ids = torch.arange(3, 3 + prompt_length).unsqueeze(0) % hf_models.VOCAB
    return watch.generate(ids, max_new_tokens=4, do_sample=False, cache_implementation="static", compile_config=config)


def test_generate_compiles_are_verified_and_a_new_prompt_length_recompiles_with_its_guard(write_contract) -> None:
    """The first call compiles the model's forward (verified: same settings as the contract, no mismatch), a second
    call of the same length compiles nothing, a longer prompt (larger static cache) recompiles, its guard logged."""
    events = Events()
    config = compile_config()
    with GenerateContract(hf_models.llama(), write_contract(MODEL), serve=False, logger=events) as watch:
        generate(watch, 5, config)
        first = watch.monitor.snapshot()["model"]["compiles"]
        generate(watch, 5, config)
        assert watch.monitor.snapshot()["model"]["compiles"] == first >= 1
        generate(watch, 9, config)
        snap = watch.monitor.snapshot()["model"]
    assert snap["recompiles"] >= 1 and snap["budget_recompiles"] >= 1  # warm after the first call
    assert {(e["module"], e["method"]) for e in events.named("compile")} == {("<root>", "forward")}
    guards = [e["guard"] for e in events.named("recompile")]
    assert any(("cache" in g or "past_key_values" in g) and "size mismatch" in g for g in guards), guards
    assert events.named("engine_compile_mismatch") == []


def test_an_engine_compile_with_other_settings_is_a_breach_that_fails_the_next_call(write_contract) -> None:
    """The contract says inductor, generate() compiles with eager: a mismatch at its first compile; with `fail` that
    call completes and the next one raises."""
    events = Events()
    body = MODEL.replace('backend = "eager"', 'backend = "inductor"') + 'on_breach = "fail"\n'
    config = compile_config()
    with GenerateContract(hf_models.llama(), write_contract(body), serve=False, logger=events) as watch:
        out = generate(watch, 5, config)
        assert out.shape == (1, 9)
        [mismatch] = events.named("engine_compile_mismatch")
        assert "'inductor' (contract) vs 'eager' (engine)" in mismatch["differences"]
        assert [e["regions"] for e in events.named("generate_fail_armed")] == [["model"]]
        with pytest.raises(RecompileBudgetExceeded):
            generate(watch, 5, config)


def test_an_armed_fail_reaches_the_events_file_and_the_report(write_contract, tmp_path) -> None:
    """`generate_fail_armed` goes where the monitor's events go: the events file and the report built from it."""
    import json
    from pathlib import Path

    from monitor.report import write_report

    events_file = tmp_path / "events.jsonl"
    body = MODEL.replace('backend = "eager"', 'backend = "inductor"') + 'on_breach = "fail"\n'
    body += f'[monitor]\nevents_path = "{events_file}"\n'
    with GenerateContract(hf_models.llama(), write_contract(body), serve=False, logger=Events()) as watch:
        generate(watch, 5, compile_config())
    lines = [json.loads(line) for line in events_file.read_text().splitlines()]
    [armed] = [e for e in lines if e["event"] == "generate_fail_armed"]
    assert (armed["engine"], armed["step"], armed["regions"]) == ("hf_generate", 1, ["model"])
    written = write_report([str(events_file)], str(tmp_path / "report"))
    assert "generate_fail_armed" in Path(written.html).read_text()
    assert any("hf_generate" in note and "model" in note for note in written.notes), written.notes


def test_a_first_call_served_from_another_models_compile_is_still_verified(write_contract) -> None:
    """Two models of one class in one process, the first compiled by generate() without a contract: the second's
    first generate() runs that compile (no compile event fires), yet its settings are verified at that call (the
    contract says inductor, generate() compiled with eager) and the region is marked as running served code."""
    config = compile_config()
    hf_models.llama().generate(
        torch.arange(3, 8).unsqueeze(0), max_new_tokens=4, do_sample=False, cache_implementation="static",
        compile_config=config,
    )  # fmt: skip
    events = Events()
    body = MODEL.replace('backend = "eager"', 'backend = "inductor"')
    with GenerateContract(hf_models.llama(), write_contract(body), serve=False, logger=events) as watch:
        generate(watch, 5, config)
        [mismatch] = events.named("engine_compile_mismatch")  # at the call's boundary, before any snapshot
        snap = watch.monitor.snapshot()["model"]
    assert "'inductor' (contract) vs 'eager' (engine)" in mismatch["differences"] and mismatch["served"]
    assert snap["compiles"] == 0 and snap["served_instances"] == 1 and snap["breaches"] == ["engine_settings"]
    assert [e["module"] for e in events.named("served_compile")] == ["<root>"]


def test_verifying_a_lazy_engine_at_start_is_a_located_finding(write_contract) -> None:
    """`verify_at = "start"` for generate(): nothing is compiled before the first call, CC901 names the region."""
    body = MODEL.replace('verify_at = "first_compile"', 'verify_at = "start"')
    with pytest.raises(ContractViolation) as info:
        GenerateContract(hf_models.llama(), write_contract(body), serve=False, logger=Events())
    [finding] = info.value.findings
    assert finding.code == "CC901" and "first_compile" in finding.fix
