"""ops/ configuration: promtool checks and unit tests of the alert rules, runbooks, example configs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.ops.stack import ALERTS, OPS, REPO

REQUIRED_ALERTS = (
    "RecompileBudgetExceeded",
    "RecompileLimitHit",
    "GraphBreaksAboveBudget",
    "CompileRankDivergence",
    "CompileCacheMissStorm",
    "ColdCompile",
    "CompileTimeBudgetExceeded",
    "CompileStalled",
    "CompileWhilePeersWait",
    "MonitorTargetDown",
    "TorchCompileMonitorDegraded",
)
RUNBOOK_SECTIONS = ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation")
LOG_EVENTS = (
    "compile",
    "recompile",
    "graph_break",
    "budget_exceeded",
    "recompile_limit_hit",
    "monitor_error",
    "cold_compile",
    "compile_started",
    "monitor_degraded",
)


def rules() -> list[dict]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def alerts() -> dict[str, dict]:
    return {r["alert"]: r for r in rules() if "alert" in r}


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=REPO)


def test_promtool_check_rules_accepts_the_alert_and_recording_rules(promtool):
    result = run(promtool, "check", "rules", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules())} rules found" in result.stdout


def test_promtool_unit_tests_of_every_alert_pass(promtool):
    result = run(promtool, "test", "rules", str(OPS / "prometheus" / "alerts_test.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_unit_tests_fail_when_an_alert_expression_is_broken(promtool, tmp_path: Path):
    """The unit tests have teeth: firing divergence on equal counts is caught."""
    (tmp_path / "alerts.yml").write_text(
        ALERTS.read_text().replace(
            "job_region:torch_compile_compiles:spread > 0", "job_region:torch_compile_compiles:spread >= 0"
        )
    )
    (tmp_path / "alerts_test.yml").write_text((OPS / "prometheus" / "alerts_test.yml").read_text())
    result = run(promtool, "test", "rules", str(tmp_path / "alerts_test.yml"))
    assert result.returncode != 0
    assert "alertname: CompileRankDivergence" in result.stdout + result.stderr


def test_every_required_alert_exists_with_severity_summary_description_and_runbook():
    found = alerts()
    assert set(REQUIRED_ALERTS) <= set(found)
    for name, rule in found.items():
        assert rule["labels"]["severity"] in ("critical", "warning"), name
        notes = rule["annotations"]
        assert set(notes) >= {"summary", "description", "runbook_url"}, name
        assert notes["runbook_url"] == f"ops/runbooks/{name}.md", name
        if name == "MonitorTargetDown":  # `up` has no region label: that alert names the rank's endpoint instead
            assert "$labels.instance" in notes["summary"], name
        elif name == "TorchCompileMonitorDegraded":  # per capability of the monitor, not per region
            assert "$labels.capability" in notes["summary"] and "$labels.capability" in notes["description"], name
        else:
            assert "$labels.region" in notes["summary"] and "$labels.region" in notes["description"], name


def test_every_alert_has_a_runbook_with_meaning_impact_diagnosis_and_mitigation():
    logged = set()
    for name in alerts():
        text = (REPO / "ops" / "runbooks" / f"{name}.md").read_text()
        assert text.startswith(f"# {name}\n"), name
        positions = [text.find(section) for section in RUNBOOK_SECTIONS]
        assert all(p > 0 for p in positions) and positions == sorted(positions), (name, positions)
        diagnosis = text[positions[2] : positions[3]]
        logged |= {e for e in LOG_EVENTS if re.search(rf"`{e}`", diagnosis)}
    assert logged == set(LOG_EVENTS), f"log events no runbook's Diagnosis names: {set(LOG_EVENTS) - logged}"


def test_every_alert_has_a_firing_and_a_silent_unit_test_case():
    cases = yaml.safe_load((OPS / "prometheus" / "alerts_test.yml").read_text())["tests"]
    firing, silent = set(), set()
    for case in cases:
        for check in case.get("alert_rule_test", []):
            (firing if check.get("exp_alerts") else silent).add(check["alertname"])
    assert firing >= set(alerts()), f"never tested firing: {set(alerts()) - firing}"
    assert silent >= set(alerts()), f"never tested silent: {set(alerts()) - silent}"


def test_the_example_prometheus_config_is_valid_and_scrapes_one_target_per_local_rank_port(promtool):
    path = OPS / "prometheus" / "prometheus.yml"
    result = run(promtool, "check", "config", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    job = yaml.safe_load(path.read_text())["scrape_configs"][0]
    targets = job["static_configs"][0]["targets"]
    assert len(targets) == len(set(targets)) and {t.rsplit(":", 1)[1] for t in targets} == {
        str(9400 + r) for r in range(8)
    }
    assert job["static_configs"][0]["labels"]["exporter"] == "torch_compile_contract"
    assert 'up{exporter="torch_compile_contract"}' in alerts()["MonitorTargetDown"]["expr"]


def test_the_example_alertmanager_config_is_valid(amtool):
    result = run(amtool, "check-config", str(OPS / "alertmanager" / "alertmanager.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def metric_names(expr: str) -> set[str]:
    """Our metric names in a PromQL expression, through recording rules (string literals ignored)."""
    bare = re.sub(r'"[^"]*"', '""', expr)
    names = set(re.findall(r"(?<![\w:])(torch_compile_\w+|target_info)(?![\w:])", bare))
    recorded = {r["record"]: r["expr"] for r in rules() if "record" in r}
    for token in re.findall(r"(?<![\w:])(\w+:\w+:\w+)(?![\w:])", bare):
        names |= metric_names(recorded[token])
    return names


@pytest.mark.parametrize("name", REQUIRED_ALERTS)
def test_alert_rules_use_only_metrics_the_monitor_exports(name, exported_names):
    names = metric_names(alerts()[name]["expr"])
    if name != "MonitorTargetDown":
        assert names, name
    assert names <= exported_names, names - exported_names
