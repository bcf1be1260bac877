"""`compile-contract init` on Hugging Face decoders built from small configs (no downloads): Llama, an MoE (Mixtral)
and GPT-2 get their layer globs, pass `check` with the probe, and breach nothing under the monitor; scenario 2's
decode loop with a growing KV cache settles within the recorded warm-up."""

from __future__ import annotations

import pytest

from contract.document.refs import build_model, resolve
from contract.pipeline import check
from tests.init.harness import STEPS, generated, regions_of, run_under

pytest.importorskip("transformers")

HF = {
    "llama": {"layers": "model.layers.*", "norm": "model.norm", "lm_head": "lm_head"},
    "mixtral": {"layers": "model.layers.*", "norm": "model.norm", "lm_head": "lm_head"},
    "gpt2": {"transformer_h": "transformer.h.*", "lm_head": "lm_head"},
}


@pytest.mark.parametrize("name", sorted(HF))
def test_hugging_face_decoders_get_their_layer_globs_and_breach_nothing(name: str, tmp_path) -> None:
    model_ref, step_ref = f"tests.checks.hf_models:{name}", "tests.checks.hf_models:step"
    path, result = generated(tmp_path, model_ref, step_ref, steps=3)
    assert result.findings == [], [str(f) for f in result.findings]
    assert regions_of(path) == HF[name]
    _, _, findings = check(path, build_model(model_ref), step=resolve(step_ref, "step"))
    assert findings == [], [str(f) for f in findings]
    snap = run_under(path, model_ref, step_ref, 3)
    assert not any(s["breached"] for s in snap.values()), snap


def test_scenario2_decode_with_a_growing_cache_settles_within_its_warm_up(tmp_path) -> None:
    model_ref, step_ref = "examples.scenario_models:build_llama", "tests.init.models:decode_step"
    path, result = generated(tmp_path, model_ref, step_ref)
    # the second layer compiles again on a guard about the cache it is handed (`not kwargs['cache'].layers`), not
    # about itself: with two layers the probe cannot tell that from an input that differs once (no CC408); with four
    # the compiles grow per layer and hit the recompile limit (CC402). The budgets written from the recording absorb it
    assert result.findings == [], [str(f) for f in result.findings]
    assert regions_of(path)["layers"] == "model.layers.*"
    snap = run_under(path, model_ref, step_ref, STEPS)
    assert not any(s["breached"] for s in snap.values()), snap
