"""The probe's twin (`[probe] model`): the step runs on a small model of the same classes while every other check
reads the real model on the meta device; `init` writes the twin for Hugging Face models. Real shapes here are
Llama-3-8B and DeepSeek-V2-Lite (bench/bench_twin_probe.py measures fourteen architectures)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from contract.checks.probe.twin import kind
from contract.cli import main
from contract.document.load import load
from contract.document.refs import build_model, resolve
from contract.init.generate import Options, generate
from contract.init.twin import build as build_twin
from contract.init.twin import plan
from contract.init.twin_config import decoder_layers
from contract.pipeline import check, check_loaded
from tests.report.test_catalog import EXAMPLES

STEP = "tests.checks.hf_models:step"


def codes(findings: list) -> set[tuple[str, str]]:
    return {(f.code, f.location) for f in findings}


def test_a_twin_reference_that_fails_is_cc010_at_probe_model_and_the_probe_does_not_run(monkeypatch) -> None:
    """A twin that does not import is a located finding with the rest of the report, never a traceback."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    path = EXAMPLES / "CC410_region_missing_in_twin.toml"
    contract, _ = load(path)
    broken = dataclasses.replace(contract, probe=contract.probe.model_copy(update={"model": "probe_models:nope"}))
    model, step = build_model("probe_models:stack"), resolve("probe_models:step", "step")
    _, _, findings = check_loaded(broken, [], model, step=step)
    assert [(f.code, f.location) for f in findings] == [("CC010", "probe.model")]
    assert "has no attribute 'nope'" in findings[0].message


def test_a_twin_built_on_meta_is_cc010(monkeypatch) -> None:
    """The step must run on the twin: a factory returning meta tensors is refused at `probe.model`."""
    import torch

    monkeypatch.syspath_prepend(str(EXAMPLES))
    contract, _ = load(EXAMPLES / "CC410_region_missing_in_twin.toml")
    with torch.device("meta"):
        twin = build_model("probe_models:short_stack")
    model = build_model("probe_models:stack")
    _, _, findings = check_loaded(contract, [], model, step=resolve("probe_models:step", "step"), twin=None)
    assert ("CC410", "last_layer") in codes(findings)  # the named twin builds and binds
    from contract.document import refs

    monkeypatch.setattr(refs, "build_model", lambda ref, what="model", meta=False: twin)
    _, _, findings = check_loaded(contract, [], model, step=resolve("probe_models:step", "step"))
    assert codes(findings) == {("CC010", "probe.model")} and "meta device" in findings[0].message


@pytest.mark.parametrize(
    ("name", "picked", "layer_keys"),
    [
        ("gemma3_12b", [0, 5], {"layer_types": ["sliding_attention", "full_attention"]}),
        ("deepseek_v2_lite", [0, 1], {"first_k_dense_replace": 1}),
        ("qwen2_moe_57b", [0, 1], {"mlp_only_layers": [], "decoder_sparse_step": 1}),
    ],
)
def test_the_twin_keeps_one_layer_of_each_kind_the_model_has(name: str, picked: list, layer_keys: dict) -> None:
    """Sliding and full attention (Gemma 3's 5:1), a dense first layer then MoE with latent attention (DeepSeek),
    a shared expert in every layer (Qwen2-MoE): the twin holds every kind of module the real model's layers hold."""
    pytest.importorskip("transformers")
    model = build_model(f"tests.checks.hf_shapes:{name}", meta=True)
    twin_plan = plan(model, f"tests.checks.hf_shapes:{name}", Path(f"{name}.toml"))
    assert twin_plan is not None and twin_plan.picked == picked
    twin = build_twin(twin_plan)
    for key, value in layer_keys.items():
        assert getattr(twin.config, key) == value
    kinds = [{kind(m) for layer in decoder_layers(m, m.config)[1] for m in layer.modules()} for m in (model, twin)]
    assert kinds[0] == kinds[1]
    assert sum(p.numel() for p in twin.parameters()) < 50e6 < 7e9 < sum(p.numel() for p in model.parameters())


def test_hazards_planted_in_a_real_shape_llama_on_meta_are_found_through_its_twin(tmp_path, monkeypatch) -> None:
    """Llama-3-8B's shape with a per-call counter in every decoder layer and a print in the final norm, built on meta:
    the probe's own findings (a recompile on every call, a graph break) come from the twin init wrote; without the
    twin the probe cannot run (CC405 says to name one)."""
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "planted.toml"
    result = generate(Options(model_ref="tests.checks.hf_planted:llama3_8b", backend="eager", output=out))
    assert result.twin is not None and result.twin.ref == "planted_twin:twin" and result.twin.importable
    out.write_text(result.text)
    result.twin.path.write_text(result.twin.text)
    model = build_model("tests.checks.hf_planted:llama3_8b", meta=True)
    _, binding, findings = check(out, model, step=resolve(STEP, "step"))
    assert binding is not None and all(p.is_meta for p in binding.model.parameters())
    found = codes(findings)
    assert found & {("CC401", "layers"), ("CC402", "layers")} and ("CC403", "norm") in found, found
    # CC309 where the installed transformers reads `self.layer_idx` under `if past_key_values is not None:` (5.17 does,
    # 5.25 does not): a true warning about the library's code, not the planted hazards this test is about
    ours = {(c, loc) for c, loc in found if not (c == "CC309" and "transformers/" in loc)}
    assert {c for c, _ in ours} <= {"CC301", "CC304", "CC401", "CC402", "CC403"}, found

    out.write_text(result.text.replace('model = "planted_twin:twin"', ""))
    _, _, findings = check(out, model, step=resolve(STEP, "step"))
    probe = [f for f in findings if f.code.startswith("CC4")]
    assert [(f.code, f.location) for f in probe] == [("CC405", "contract.step")]
    assert "meta device" in probe[0].message and "[probe] model" in probe[0].fix


def test_init_writes_a_twin_for_a_real_shape_deepseek_and_check_passes_with_the_probe(tmp_path, monkeypatch, capsys):
    """`init --step -o` on DeepSeek-V2-Lite's shape (16B, latent attention, a dense layer then MoE) writes the twin
    next to the contract and records the step on it; `check` then builds the model on meta (a real build would need
    63 GB) and passes with the probe run on the twin."""
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    ref = "tests.checks.hf_shapes:deepseek_v2_lite"
    assert main(["init", ref, "--step", STEP, "--steps", "3", "--backend", "eager", "-o", "ds.toml"]) == 0
    report = capsys.readouterr().out
    assert "twin: ds_twin.py ([probe] model = 'ds_twin:twin'), the model's layers [0, 1]" in report
    text = (tmp_path / "ds.toml").read_text()
    assert 'model = "ds_twin:twin"' in text and "ds_twin.py, written by init" in text
    assert "recorded 3 calls" in report and "contract check passed" in report
    assert main(["check", "ds.toml", "--format", "json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    # at most CC309 where the installed transformers reads `self.layer_idx` under `if past_key_values is not None:`
    # (5.17 does, 5.25 does not): a true warning about the library's code
    assert all(f["code"] == "CC309" and "transformers/" in f["location"] for f in findings), findings
    assert main(["init", ref, "-o", "ds.toml", "--force", "--no-twin"]) == 0
    assert "[probe]" not in (tmp_path / "ds.toml").read_text()


def test_the_twin_file_is_named_after_the_contract_and_imports_from_the_working_directory(tmp_path, monkeypatch):
    """`contracts/llama-70b.toml` gets `contracts/llama_70b_twin.py`, imported as `contracts.llama_70b_twin`; a
    contract outside the working directory gets a bare module name, and the report says what to put on PYTHONPATH."""
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    model = build_model("tests.checks.hf_models:llama", meta=True)
    inside = plan(model, "tests.checks.hf_models:llama", Path("contracts/llama-70b.toml"))
    assert inside is not None and (inside.ref, inside.importable) == ("contracts.llama_70b_twin:twin", True)
    assert inside.path == Path("contracts/llama_70b_twin.py")
    elsewhere = plan(model, "tests.checks.hf_models:llama", tmp_path.parent / "other" / "llama.toml")
    assert elsewhere is not None and (elsewhere.ref, elsewhere.importable) == ("llama_twin:twin", False)
    from contract.init.twin import twin_notes

    assert "on PYTHONPATH" in twin_notes(elsewhere, model, wanted=True, stdout=False)[-1]
    result = generate(Options(model_ref="tests.checks.hf_models:llama", backend="eager"))
    assert result.twin is None and "[probe]" not in result.text
    assert any(n.startswith("no twin written: pass -o FILE") for n in result.notes)
