"""Scenario 5: opaque custom kernels and graph breaks under a zero graph-break budget."""

from __future__ import annotations

from examples.scenario5_custom_ops import probe_findings, run


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


def test_custom_op_without_fake_is_an_error_at_startup_without_a_step_and_fails_when_started_anyway(
    quiet_logger,
) -> None:
    """The hot path calls the op on every call: the scan alone makes it an error, and the first call does fail."""
    findings, _, error = run("nofake", "eager", logger=quiet_logger)
    cc601 = [f for f in findings if f.code == "CC601"]
    assert (
        cc601
        and "examples/scenario5_kernels.py:" in cc601[0].location
        and "fused_gelu_scale_nofake" in cc601[0].message
    )
    assert [f.severity for f in cc601] == ["error"]
    assert error is not None and "no fake impl registered" in error


def test_custom_op_without_fake_is_refused_once_the_probe_runs_the_step() -> None:
    findings = probe_findings("nofake", "eager")
    [refused] = [f for f in findings if f.code == "CC407"]
    assert refused.severity == "error" and "no fake impl" in refused.message.lower()
    assert [f.severity for f in findings if f.code == "CC601"] == ["error"]


def test_the_clean_variants_get_no_cc601_with_or_without_the_step(quiet_logger) -> None:
    """Precision: the kernel with a fake implementation (and the same block with .item()) is not reported."""
    for variant in ("kernel", "item"):
        findings, _, _ = run(variant, "eager", logger=quiet_logger)
        assert not [f for f in findings + probe_findings(variant, "eager") if f.code == "CC601"], variant
