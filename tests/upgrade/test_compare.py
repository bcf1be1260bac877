"""The upgrade report from two workers' results, with no interpreter run: findings matched across torches, guard
patterns, budgets, the exit code, drift, and the four renderings (JSON keys, markdown escaping, valid SARIF)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch

from contract.findings import Finding
from contract.upgrade.compare import build, diff_findings, guard_patterns, region_of
from contract.upgrade.drift import Drift, compare
from contract.upgrade.export import render_json, render_sarif
from contract.upgrade.render import render_markdown, render_text
from tests import ROOT
from tests.report.test_sarif import validator  # noqa: F401 - the fixture: the official SARIF schema

NO_DRIFT = Drift(compared=0, max_abs=None, max_rel=None, changes=())


def finding(code: str, location: str, severity: str = "error", message: str = "m") -> dict[str, str]:
    return {"code": code, "severity": severity, "location": location, "message": message, "fix": "f"}


def run(**over: Any) -> dict[str, Any]:
    """One region's run as the worker writes it."""
    base: dict[str, Any] = {
        "name": "layers",
        "compiles": 1,
        "recompiles": 0,
        "graph_breaks": 0,
        "compile_seconds": 2.0,
        "guard_count": 30,
        "instances": 1,
        "breaks": [],
        "recompile_guards": [],
        "settled_at": 1,
        "budget_recompiles": 0,
        "budget_graph_breaks": 0,
        "recompile_budget": 0,
        "graph_break_budget": 0,
    }
    return {**base, **over}


def result(
    torch_version: str, regions: list[dict[str, Any]], findings: list[dict[str, str]] = (), **over: Any
) -> dict[str, Any]:  # type: ignore[assignment]
    """A worker's result.json."""
    return {
        "format": 1,
        "torch": torch_version,
        "python": "3.11.7",
        "executable": f"/envs/{torch_version}/bin/python",
        "project": "0.1.0",
        "step": "pkg.model:step",
        "steps": 8,
        "findings": list(findings),
        "region_index": {"layers": 0, "head": 1},
        "region_modules": {"layers": ["model.layers.0", "model.layers.1"], "head": ["lm_head"]},
        "regions": regions,
        "record_error": None,
        **over,
    }


GUARDS = [
    f"0/{i}: G['CALLS'] == {i} # CALLS += 1 # /repo/model.py:20 in forward at /repo/model.py:20" for i in range(7)
]
RECOMPILING = run(compiles=8, recompiles=7, recompile_guards=GUARDS, budget_recompiles=7, compile_seconds=8.0)
BREAK = {"site": "/repo/model.py:17", "reason": "Attempted to call function marked as skipped"}


def test_the_same_finding_is_matched_by_code_and_location_whatever_its_message_says() -> None:
    cur = [Finding(**finding("CC301", "model.py:20", message="on 2.13")), Finding(**finding("CC401", "layers"))]
    cand = [
        Finding(**finding("CC301", "model.py:20", "warning", "on 2.15")),
        Finding(**finding("CC703", "torch", "warning")),
    ]
    added, removed, changed = diff_findings(cur, cand)
    assert [f.code for f in added] == ["CC703"]
    assert [f.code for f in removed] == ["CC401"]
    assert [(old.severity, new.severity) for old, new in changed] == [("error", "warning")]


def test_recompile_guards_fold_into_one_pattern_per_guard_with_its_count_and_site() -> None:
    (guard,) = guard_patterns(GUARDS)
    assert guard.count == 7 and guard.example == "G['CALLS'] == 0" and guard.site.endswith("model.py:20")
    assert guard.text().endswith("(x7)")


@pytest.mark.parametrize(
    ("location", "message", "region"),
    [
        ("layers", "m", "layers"),
        ("region[1].mode", "m", "head"),
        ("model.layers.1.attn", "m", "layers"),
        ("model.py:20", "counter on the hot path of region 'head': ...", "head"),
        ("TORCHINDUCTOR_CACHE_DIR", "m", None),
    ],
)
def test_a_finding_belongs_to_the_region_its_location_or_message_names(
    location: str, message: str, region: str | None
) -> None:
    f = Finding(**finding("CC301", location, message=message))
    assert (
        region_of(f, {"layers": 0, "head": 1}, {"layers": ["model.layers.0", "model.layers.1"], "head": ["lm_head"]})
        == region
    )


def test_a_candidate_that_stops_recompiling_passes_and_shows_what_it_removed() -> None:
    cur = result("2.13.0", [RECOMPILING], [finding("CC401", "layers")])
    cand = result("2.15.0", [run(compile_seconds=1.0)])
    report = build("c.toml", cur, cand, NO_DRIFT)
    (rc,) = report.regions
    assert report.exit_code == 0 and report.reasons == ()
    assert [g.count for g in rc.recompiles_removed] == [7] and rc.recompiles_added == ()
    assert [f.code for f in rc.findings_removed] == ["CC401"]
    assert rc.seconds_ratio == pytest.approx(1 / 8)


def test_a_candidate_that_breaks_a_budget_or_adds_an_error_fails_with_each_reason() -> None:
    cur = result("2.15.0", [run(), run(name="head")])
    cand = result(
        "2.13.0",
        [RECOMPILING, run(name="head", breaks=[BREAK], graph_breaks=1, budget_graph_breaks=1)],
        [finding("CC403", "head")],
    )
    report = build("c.toml", cur, cand, NO_DRIFT)
    assert report.exit_code == 1
    assert [r.split(":")[0] for r in report.reasons] == ["adds error CC403 at head", "region 'layers'", "region 'head'"]
    assert "7 recompiles after warm-up > recompile_budget 0" in report.reasons[1]
    assert "1 graph-break site > graph_break_budget 0" in report.reasons[2]
    head = report.regions[1]
    assert [b.reason for b in head.breaks_added] == [BREAK["reason"]] and [f.code for f in head.findings_added] == [
        "CC403"
    ]


def test_a_warning_added_passes_and_an_error_made_of_a_warning_fails() -> None:
    cur = result("2.13.0", [run()], [finding("CC301", "model.py:20", "warning")])
    assert (
        build(
            "c.toml",
            cur,
            result(
                "2.15.0", [run()], [finding("CC703", "torch", "warning"), finding("CC301", "model.py:20", "warning")]
            ),
            NO_DRIFT,
        ).exit_code
        == 0
    )
    worse = build("c.toml", cur, result("2.15.0", [run()], [finding("CC301", "model.py:20")]), NO_DRIFT)
    assert worse.exit_code == 1 and "becomes an error" in worse.reasons[0]


def test_a_step_that_fails_under_the_candidate_fails_the_upgrade() -> None:
    cand = result("2.15.0", [], record_error="step 'pkg.model:step' raised RuntimeError: no")
    report = build("c.toml", result("2.13.0", [run()]), cand, NO_DRIFT)
    assert report.exit_code == 1 and "the step fails under the candidate" in report.reasons[0]


def test_drift_reports_values_dtype_shape_and_outputs_only_one_torch_returned() -> None:
    a = {
        "call0": torch.tensor([1.0, 2.0, float("nan")]),
        "call1": torch.ones(2),
        "call2": torch.ones(2),
        "gone": torch.ones(1),
    }
    b = {
        "call0": torch.tensor([1.0, 2.5, float("nan")]),
        "call1": torch.ones(2, dtype=torch.float64),
        "call2": torch.ones(3),
        "new": torch.ones(1),
    }
    drift = compare(a, b)
    assert drift.compared == 1 and drift.max_abs == pytest.approx(0.5) and drift.max_rel == pytest.approx(0.25)
    assert {c.name: c.change for c in drift.changes} == {
        "call0": "values",
        "call1": "dtype",
        "call2": "shape",
        "gone": "missing",
        "new": "new",
    }


def test_drift_of_a_nan_against_a_number_is_infinite() -> None:
    drift = compare({"x": torch.tensor([1.0])}, {"x": torch.tensor([float("nan")])})
    assert math.isinf(drift.max_abs or 0.0)


def failing_report() -> Any:
    cur = result("2.15.0", [run(), run(name="head")])
    cand = result(
        "2.13.0",
        [RECOMPILING, run(name="head", breaks=[BREAK], graph_breaks=1, budget_graph_breaks=1)],
        [finding("CC403", "head", message="a | b <x>")],
    )
    return build("contracts/demo.toml", cur, cand, compare({"call0": torch.ones(2)}, {"call0": torch.ones(2) * 1.001}))


def test_the_json_report_has_the_documented_fields() -> None:
    data = json.loads(render_json(failing_report()))
    assert data["current"]["torch"] == "2.15.0" and data["candidate"]["torch"] == "2.13.0"
    assert data["exit_code"] == 1 and data["ok"] is False
    for region in data["regions"]:
        assert set(region) >= {
            "name",
            "current",
            "candidate",
            "compile_seconds_ratio",
            "graph_breaks_added",
            "recompiles_added",
        }
        for side in ("current", "candidate"):
            assert set(region[side]) >= {"compiles", "recompiles", "graph_breaks", "compile_seconds", "guard_count"}
    assert [(f["code"], f["region"]) for f in data["findings_added"]] == [("CC403", "head")]
    assert data["findings_removed"] == [] and data["drift"]["compared"] == 1


def test_text_and_markdown_show_both_torches_side_by_side_and_markdown_escapes_user_text() -> None:
    report = failing_report()
    text = render_text(report)
    assert "2.15.0" in text and "2.13.0" in text and "FAILS the contract (exit 1)" in text
    assert "+ graph break: Attempted to call function marked as skipped at " in text
    md = render_markdown(report)
    assert "| `layers` | 1 → 8 | 0 → 7 |" in md and "**fails the contract**" in md
    assert "a \\| b &lt;x&gt;" in md and "a | b <x>" not in md


def test_sarif_holds_the_added_errors_and_the_upgrade_results_and_is_valid(
    validator: Any,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    log = json.loads(render_sarif(failing_report()))
    validator.validate(log)
    results = {(r["ruleId"], r["level"]) for r in log["runs"][0]["results"]}
    assert results == {
        ("CC403", "error"),
        ("upgrade/graph-break-added", "warning"),
        ("upgrade/recompile-added", "warning"),
        ("upgrade/budget-broken", "error"),
    }
