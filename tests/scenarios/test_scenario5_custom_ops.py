"""Scenario 5: opaque custom kernels and graph breaks under a zero graph-break budget."""

from __future__ import annotations

from scenario5_custom_ops import probe_findings, run


def test_custom_op_with_fake_compiles_with_zero_graph_breaks(quiet_logger) -> None:
    findings, snap, error = run("kernel", "eager", logger=quiet_logger)
    blocks = snap["blocks"]
    assert error is None and not findings
    assert blocks["compiles"] >= 1 and blocks["graph_breaks"] == 0 and not blocks["breached"]


def test_item_on_the_hot_path_is_reported_with_its_break_reason_and_breaches(quiet_logger) -> None:
    _, snap, error = run("item", "eager", logger=quiet_logger)
    assert error is None and snap["blocks"]["graph_breaks"] >= 1 and snap["blocks"]["breached"]
    breaks = [e for e in quiet_logger.events if e["event"] == "graph_break"]
    assert breaks and "Tensor.item()" in breaks[0]["reason"]


def test_custom_op_without_fake_is_flagged_at_startup_and_fails_when_started_anyway(quiet_logger) -> None:
    findings, _, error = run("nofake", "eager", logger=quiet_logger)
    cc601 = [f for f in findings if f.code == "CC601"]
    assert cc601 and "examples/kernels.py:" in cc601[0].location and "fused_gelu_scale_nofake" in cc601[0].message
    assert error is not None and "no fake impl registered" in error


def test_custom_op_without_fake_is_refused_once_the_probe_runs_the_step() -> None:
    [refused] = [f for f in probe_findings("nofake", "eager") if f.code == "CC407"]
    assert refused.severity == "error" and "no fake impl" in refused.message.lower()
