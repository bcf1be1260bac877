"""Scenario 2: decode with a growing DynamicCache on a tiny Llama, per-layer regions."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import monitor
from contract.pipeline import check
from contract.report.catalog import get
from examples.scenario_common import check_and_apply, contract_path
from examples.scenario_models import build_llama, decode


def _decode_under(path: str, logger) -> dict:
    model = build_llama()
    binding, _ = check_and_apply(contract_path(path, "eager"), model)
    with monitor.start(binding, serve=False, manual_warmup=True, logger=logger) as mon:
        decode(model, prompt=8, new_tokens=2)
        mon.mark_warm()
        decode(model, prompt=5, new_tokens=6, seed=1)
        return mon.snapshot()["layers"]


def test_static_shapes_recompile_per_token_with_size_mismatch_reasons_and_breach(quiet_logger) -> None:
    snap = _decode_under("contracts/scenario2-decode-static.toml", quiet_logger)
    assert snap["breached"] and snap["budget_recompiles"] > 0
    assert snap["recompile_limit_hits"] >= 1
    assert any(
        "size mismatch at index 2" in r for e in quiet_logger.events if e["event"] == "recompile" for r in [e["guard"]]
    )


def test_dynamic_sequence_contract_holds_zero_recompiles_after_warmup(quiet_logger) -> None:
    snap = _decode_under("contracts/scenario2-decode-dynamic.toml", quiet_logger)
    assert snap["compiles"] >= 2 and snap["budget_recompiles"] == 0 and not snap["breached"]
    assert snap["recompile_limit_hits"] == 0


def test_checker_warns_on_cuda_graphs_with_dynamic_shapes() -> None:
    if get("CC107") is None:
        pytest.skip("CC107 (CUDA graphs with dynamic shapes) not registered in this build")
    _, _, findings = check(contract_path("contracts/scenario2-decode-cudagraphs.toml"), build_llama())
    cc107 = [f for f in findings if f.code == "CC107"]
    assert cc107 and cc107[0].severity == "warning" and cc107[0].location.startswith("region[0]")
