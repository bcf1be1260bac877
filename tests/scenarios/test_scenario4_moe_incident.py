"""Scenario 4: the MoE overflow-counter incident, refused at startup; with the check skipped, the monitor sees it."""

from __future__ import annotations

import pytest

from contract.findings import has_errors
from contract.report.catalog import get
from examples.scenario4_moe_incident import FIXED, HAZARD, startup, storm


def test_hazard_model_is_refused_at_startup_with_the_counter_lines() -> None:
    if get("CC301") is None:
        pytest.skip("the CC3xx static scan is not registered in this build")
    findings = startup(HAZARD, "contract.demo:build_hazard_model", "eager")
    assert has_errors(findings)
    assert {f.location.rsplit(":", 1)[0] for f in findings if f.code == "CC301"} == {"contract/demo.py"}


def test_fixed_model_with_a_buffer_counter_passes_the_startup_check() -> None:
    assert not has_errors(startup(FIXED, "contract.demo:build_model", "eager"))


def test_with_the_check_skipped_the_monitor_shows_storm_limit_hit_and_breach(quiet_logger) -> None:
    layers = storm("eager", steps=10, logger=quiet_logger)["layers"]
    assert layers["recompiles"] >= 7 and layers["recompile_limit_hits"] >= 1 and layers["breached"]
    assert any("batches ==" in r for r in layers["last_reasons"])
    events = {e["event"] for e in quiet_logger.events}
    assert {"budget_exceeded", "recompile_limit_hit"} <= events
