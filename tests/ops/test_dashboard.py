"""The Grafana dashboard: JSON structure, variables, required panels, and every query valid PromQL (promtool)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from tests.ops.dashboard import load, panels, queries, render, variable_probe
from tests.ops.test_rules import metric_names

REQUIRED_PANELS = (
    "Recompiles by reason",
    "Recompiles by region",
    "Budget use",
    "Graph breaks",
    "Compile time quantiles",
    "Cache hit ratio",
    "Eager-fallback regions",
    "Recompile-limit hits",
    "Monitor errors by kind",
    "Compiles per rank",
    "Cold compiles",
    "Compile time against the budget",
)
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def variables() -> dict[str, dict]:
    return {v["name"]: v for v in load()["templating"]["list"]}


def test_dashboard_has_identity_schema_version_and_unique_panel_ids():
    dash = load()
    assert dash["uid"] == "torch-compile-contract" and dash["title"]
    assert isinstance(dash["schemaVersion"], int) and dash["schemaVersion"] >= 36
    ids = [p["id"] for p in dash["panels"]] + [p["id"] for r in dash["panels"] for p in r.get("panels", [])]
    assert len(ids) == len(set(ids))


def test_panels_fit_the_24_column_grid_without_overlapping():
    cells: set[tuple[int, int]] = set()
    for p in load()["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["w"] > 0 and g["h"] > 0 and g["x"] + g["w"] <= 24, p["title"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, f"panel {p['title']!r} overlaps another"
        cells |= mine


def test_variables_are_datasource_job_region_and_rank_with_all_as_a_regex():
    vs = variables()
    assert list(vs) == ["datasource", "job", "region", "rank"]
    assert vs["datasource"]["type"] == "datasource" and vs["datasource"]["query"] == "prometheus"
    for name in ("job", "region", "rank"):
        v = vs[name]
        assert v["type"] == "query" and v["datasource"] == DATASOURCE, name
        assert v["multi"] and v["includeAll"] and v["allValue"] == ".*", name
        assert v["query"]["query"] == v["definition"], name
        _, label = variable_probe(v["definition"])
        assert label == name
    assert "$job" in vs["region"]["definition"] and "$job" in vs["rank"]["definition"]


def test_the_required_panels_exist_and_every_panel_queries_the_datasource_variable():
    ps = panels(load())
    assert set(REQUIRED_PANELS) <= {p["title"] for p in ps}
    for p in ps:
        assert p["datasource"] == DATASOURCE and p["targets"], p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)), p["title"]
        assert all(t["datasource"] == DATASOURCE and t["expr"].strip() for t in p["targets"]), p["title"]


def test_every_query_is_filtered_by_the_job_region_and_rank_variables():
    for q in queries(load()):
        assert 'job=~"$job"' in q.expr, q
        region_metrics = metric_names(q.expr) - {
            "torch_compile_monitor_errors_total",
            "torch_compile_warm",
            "torch_compile_contract_info",
            "torch_compile_unclaimed_compiles_total",
            "torch_compile_unclaimed_recompiles_total",
            "torch_compile_unclaimed_compile_budget",
            "target_info",
        }  # monitor-wide families: no region label
        if region_metrics:
            assert 'region=~"$region"' in q.expr, q
        if "target_info" in q.expr:
            assert 'target_info{job=~"$job",rank=~"$rank"}' in q.expr, q


def test_compile_time_quantiles_come_from_the_histogram_buckets():
    quantiles = [q for q in queries(load()) if q.panel == "Compile time quantiles"]
    assert {re.search(r"histogram_quantile\(([\d.]+),", q.expr)[1] for q in quantiles} == {"0.5", "0.9", "0.99"}
    assert all("torch_compile_compile_seconds_bucket" in q.expr and "by (le, region)" in q.expr for q in quantiles)


def test_dashboard_queries_use_only_metrics_the_monitor_exports(exported_names):
    for q in queries(load()):
        names = metric_names(q.expr)
        assert names or "up{" in q.expr, q
        assert names <= exported_names, (q, names - exported_names)


def test_every_dashboard_and_variable_query_is_valid_promql_for_promtool(promtool, tmp_path: Path):
    exprs = [render(q.expr) for q in queries(load())]
    exprs += [variable_probe(v["definition"])[0] for v in variables().values() if v["type"] == "query"]
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:query_{i}:check", "expr": e} for i, e in enumerate(exprs)],
            }
        ]
    }
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout


def test_promtool_rejects_a_broken_dashboard_query(promtool, tmp_path: Path):
    """The syntax check above can fail: an unbalanced query is reported."""
    broken = render(queries(load())[0].expr) + ")"
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "d", "rules": [{"record": "d:q:c", "expr": broken}]}]}))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "parse error" in (result.stdout + result.stderr)
