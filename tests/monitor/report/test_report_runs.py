"""Reports rendered from real monitored runs show their regions, counts, reasons, breaches and cross-rank divergence,
with a valid PNG and a trace every event of which has the fields the Chrome trace-event format requires."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from contract.cli import main
from monitor.report import load
from tests.monitor.report.conftest import RunDir

PHASES = {"X", "i", "M"}


def report(run: RunDir, tmp_path: Path, capsys) -> tuple[str, dict, Path]:
    """Render through the CLI; (page, trace document, output dir)."""
    out = tmp_path / "report"
    assert main(["report", *map(str, run.files), "-o", str(out)]) == 0
    capsys.readouterr()
    return (out / "report.html").read_text(), json.loads((out / "trace.json").read_text()), out


def section(page: str, name: str) -> str:
    match = re.search(rf'<section id="{name}".*?</section>', page, re.S)
    assert match, name
    return match.group(0)


def assert_trace_is_valid(doc: dict) -> None:
    """Every event has what chrome://tracing and Perfetto require for its phase."""
    events = doc["traceEvents"]
    assert events
    for e in events:
        assert isinstance(e["name"], str) and e["ph"] in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["ts"], int | float), e
        if e["ph"] == "X":
            assert isinstance(e["dur"], int | float) and e["dur"] >= 0 and e["ts"] >= 0, e
        if e["ph"] == "i":
            assert e["s"] in ("g", "p", "t"), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "process_sort_index", "thread_name", "thread_sort_index"), e
            assert isinstance(e["args"], dict), e


def assert_png(out: Path, page: str) -> None:
    data = (out / "timeline.png").read_bytes()
    Image.open(io.BytesIO(data)).verify()
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "PNG" and img.width >= 800 and img.height >= 100
    embedded = re.search(r'<img id="timeline"[^>]*src="data:image/png;base64,([^"]+)"', page)
    assert embedded and base64.b64decode(embedded.group(1)) == data


def test_the_demo_report_matches_the_counts_the_run_printed(demo_run, tmp_path, capsys):
    assert len(demo_run.files) == 1
    assert "post-mortem report: compile-contract report" in demo_run.stdout
    page, doc, out = report(demo_run, tmp_path, capsys)
    run = load([str(f) for f in demo_run.files])
    assert list(run.regions) == ["layers", "lm_head"] == list(demo_run.summary)
    for name, printed in demo_run.summary.items():
        cell = run.regions[name].merged
        assert (cell.compiles, cell.recompiles, cell.graph_breaks) == tuple(
            int(printed[k]) for k in ("compiles", "recompiles", "graph_breaks")
        )
        assert f'data-region="{name}"' in page
    assert not any(v.breached for v in run.regions.values())
    assert "demo-decoder" in section(page, "identity") and run.contracts[0][1] in page  # name and sha256
    assert "One rank in the inputs" in section(page, "divergence")
    assert "No budget was exceeded" in section(page, "breaches")
    assert "Every line of the" in section(page, "notes")
    assert_png(out, page)
    assert_trace_is_valid(doc)


def test_the_hazard_report_shows_the_storm_its_guard_the_breach_and_the_eager_fallback(hazard_run, tmp_path, capsys):
    page, doc, out = report(hazard_run, tmp_path, capsys)
    run = load([str(f) for f in hazard_run.files])
    layers = run.regions["layers"]
    assert layers.merged.recompiles == int(hazard_run.summary["layers"]["recompiles"]) >= 1
    assert hazard_run.summary["layers"]["eager_fallback"] == "True"
    (breach,) = layers.merged.breaches
    assert (breach.kind, breach.action, breach.budget) == ("recompile_budget", "eager", 0)
    ((category, guard, _, _), _n) = layers.merged.reasons.most_common(1)[0]
    assert category == "value" and "batches" in guard and "demo.py" in guard
    overview = section(page, "overview")
    assert re.search(r'<tr class="bad"><td><a href="#region-0">layers</a>', overview)
    assert "recompile_budget" in overview and "→ eager" in overview
    assert "batches" in page and "<span class=badge>breached</span>" in page
    assert re.search(
        r"<td>t\+[\d.]+ s</td><td>layers</td><td>0</td><td>recompile_budget</td><td>1 &gt; 0</td><td>eager</td>",
        section(page, "breaches"),
    )
    recompiles = [e for e in doc["traceEvents"] if e.get("cat") == "recompile"]
    assert len(recompiles) == layers.merged.recompiles
    assert all(e["args"]["reason"] == "value" and "batches" in e["args"]["guard"] for e in recompiles)
    assert [e["args"]["text"] for e in doc["traceEvents"] if e["name"] == "breach"][0].endswith(": eager")
    assert_png(out, page)
    assert_trace_is_valid(doc)


def test_the_two_rank_report_names_the_rank_that_recompiled_in_the_divergence_table(ranks_run, tmp_path, capsys):
    assert [f.name for f in ranks_run.files] == ["events-0.jsonl", "events-1.jsonl"]
    page, doc, out = report(ranks_run, tmp_path, capsys)
    run = load([str(f) for f in ranks_run.files])
    assert run.rank_order == ["0", "1"]
    body = run.regions["body"]
    assert (body.cells["0"].recompiles, body.cells["1"].recompiles) == (0, 1)
    assert body.cells["1"].reasons.most_common(1)[0][0][0] == "shape"
    assert [b.rank for b in body.merged.breaches] == ["1"]
    rows = {(d.region, d.metric): d for d in run.divergence}
    assert rows[("body", "recompiles")].odd == ["1"] and rows[("body", "compiles")].values == {"0": 1, "1": 2}
    assert not any(region == "gate" for region, _ in rows)
    table = section(page, "divergence")
    assert re.search(
        r'<tr class="bad divergence"><td>body</td><td>recompiles</td><td class=n>0</td><td class=n>1</td><td>1</td></tr>',
        table,
    )
    assert ">gate<" not in table
    breaches = re.findall(r"<td>t\+([\d.]+) s</td><td>(\w+)</td><td>(\d)</td>", section(page, "breaches"))
    assert sorted(b[1:] for b in breaches) == [("body", "1"), ("head", "1")]
    assert [float(b[0]) for b in breaches] == sorted(float(b[0]) for b in breaches)  # which budget broke first
    processes = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert processes == {"rank 0", "rank 1"}
    tracks = {(e["pid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {name for _, name in tracks} == {"body", "head", "gate"}
    assert_png(out, page)
    assert_trace_is_valid(doc)


@pytest.mark.slow
def test_inductor_cache_misses_then_hits_are_cold_then_first_compiles_with_their_backward(
    tmp_path, monkeypatch, capsys
):
    import torch
    from prometheus_client import CollectorRegistry
    from torch import nn

    import monitor
    from tests.monitor.conftest import HEADER, bind_applied

    class Mlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(x)).sum()

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    contract = tmp_path / "c.toml"
    contract.write_text(
        HEADER
        + '[[region]]\nname = "mlp"\nmodule = ""\nbackend = "inductor"\n'
        + '[monitor]\nevents_path = "ev-{rank}.jsonl"\n'
    )
    model = Mlp()
    binding = bind_applied(contract, model)
    with monitor.start(binding, registry=CollectorRegistry(), serve=False):
        model(torch.randn(4, 8)).backward()  # cold: the FX graph cache misses; the backward compiles lazily
        torch._dynamo.reset()
        model(torch.randn(4, 8)).backward()  # the same graph again: served from the cache
    run = RunDir(tmp_path, [tmp_path / "ev-0.jsonl"], "", {})
    _, doc, _ = report(run, tmp_path, capsys)
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    forward = [e for e in spans if e["cat"] in ("cold", "first")]
    assert [(e["cat"], e["args"]["cache"]) for e in forward] == [("cold", "miss"), ("first", "hit")]
    assert "backward" in {e["cat"] for e in spans}
    cell = load([str(tmp_path / "ev-0.jsonl")]).regions["mlp"].merged
    assert cell.cache["fx_graph_miss"] >= 1 and cell.cache["fx_graph_hit"] >= 1 and cell.backward >= 1


def test_the_ranks_plain_stderr_logs_give_the_same_counts_and_divergence_as_their_event_files(ranks_run):
    logs = [str(ranks_run.path / f"rank{r}.log") for r in range(2)]
    from_logs, from_files = load(logs), load([str(f) for f in ranks_run.files])
    assert from_logs.rank_order == ["0", "1"]
    for name, view in from_files.regions.items():
        for rank, cell in view.cells.items():
            other = from_logs.regions[name].cells[rank]
            assert (other.compiles, other.recompiles, len(other.breaches)) == (
                cell.compiles,
                cell.recompiles,
                len(cell.breaches),
            )
    assert {(d.region, d.metric, tuple(d.odd)) for d in from_logs.divergence} == {
        (d.region, d.metric, tuple(d.odd)) for d in from_files.divergence
    }
    assert all(s.end > 1e9 for s in from_logs.spans)  # wall times from the log lines' ISO timestamps
