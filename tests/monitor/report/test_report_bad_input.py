"""Bad input never ends in a traceback: the report shows what was readable and a clear note of what was skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.events import EventFile
from monitor.report import load, write_report
from tests.monitor.report.conftest import ROOT, env

RANK0 = {"rank": "0", "local_rank": "0", "world_size": "2"}


def write_events(path: Path, rank: str = "0", *, recompiles: int = 2) -> Path:
    """Events in the exact format the monitor writes (its own writer), for one small run of one rank."""
    out = EventFile(str(path), {**RANK0, "rank": rank}, on_error=lambda exc: (_ for _ in ()).throw(exc))
    settings_ = {"layers": {"recompile_budget": 0, "graph_break_budget": 0, "on_breach": "alert"}}
    out.write("info", "monitor_started", {"contract": "c", "contract_sha256": "ab" * 32, "region_settings": settings_})
    out.write("info", "compile", {"region": "layers", "compile_id": "0/0", "seconds": 0.5, "recompile": False})
    for i in range(recompiles):
        out.write(
            "info", "compile", {"region": "layers", "compile_id": f"0/{i + 1}", "seconds": 0.2, "recompile": True}
        )
        out.write(
            "warning",
            "recompile",
            {
                "region": "layers",
                "reason": "shape",
                "guard": f"0/{i}: size mismatch",
                "count": i + 1,
                "budget": 0,
                "counted": True,
            },
        )
    out.write("info", "monitor_stopped", {"summary": {}})
    out.close()
    return path


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from contract.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120
    )


def test_a_truncated_log_reports_every_complete_event_and_names_the_cut_line(tmp_path):
    path = write_events(tmp_path / "ev.jsonl")
    text = path.read_text()
    path.write_text(text[: text.rindex('"summary"')])  # the process died mid-line
    run = load([str(path)])
    assert run.regions["layers"].merged.recompiles == 2
    (note,) = run.reading.notes.values()
    assert "cut off or corrupt" in note.message and note.examples == [f"{path}:7"]
    assert any("no `monitor_stopped` event" in n for n in run.notes)


def test_lines_of_other_programs_are_left_out_and_counted(tmp_path):
    events = write_events(tmp_path / "ev.jsonl").read_text().splitlines()
    noise = [
        "step 0: loss 2.31",
        '{"msg": "dataloader ready", "workers": 4}',
        '{"event": "request_done", "level": "info", "path": "/health"}',
        "[rank0]: Traceback (most recent call last):",
        "\x00\x01\xff garbage",
        "[1] ['a', 'list'] {not json}",
        "",
    ]
    mixed = [line for pair in zip(events, noise, strict=False) for line in pair] + events[len(noise) :]
    path = tmp_path / "train.log"
    path.write_text("\n".join(mixed) + "\n", errors="surrogateescape")
    run = load([str(path)])
    assert len(run.reading.events) == len(events)
    assert run.regions["layers"].merged.recompiles == 2
    notes = {k: n.count for k, n in run.reading.notes.items()}
    assert notes == {"other": 4, "foreign": 2}


def test_monitor_lines_inside_a_prefixed_stderr_log_are_read_with_their_iso_timestamps(tmp_path):
    line = {
        "region": "layers",
        "compile_id": "0/0",
        "seconds": 0.5,
        "recompile": False,
        "event": "compile",
        "level": "info",
        "timestamp": "2026-11-23T15:18:23.566616Z",
        "rank": 1,
    }
    path = tmp_path / "srun.log"
    path.write_text(f"1: {json.dumps(line)}\n")
    run = load([str(path)])
    assert list(run.ranks) == ["1"] and run.spans[0].end == 1795447103.566616


def test_events_of_another_format_version_are_skipped_with_a_note_naming_it(tmp_path):
    path = write_events(tmp_path / "ev.jsonl")
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(line.replace('"v": 1', '"v": 0') for line in path.read_text().splitlines()) + "\n")
    run = load([str(path), str(old)])
    assert run.regions["layers"].merged.recompiles == 2  # only the current file's
    (note,) = run.reading.notes.values()
    assert note.count == 7 and "format version 0" in note.message and "reads version 1" in note.message


def test_unknown_event_names_and_fields_of_a_newer_monitor_are_tolerated(tmp_path):
    out = EventFile(str(tmp_path / "ev.jsonl"), RANK0, on_error=print)
    out.write(
        "info", "compile", {"region": "r", "compile_id": "0/0", "seconds": 0.1, "recompile": False, "new_field": [1]}
    )
    out.write("info", "compile", {"region": "r", "compile_id": "0/1", "seconds": 0.1, "recompile": True})
    recompile = {"region": "r", "reason": "shape", "guard": "x", "site": "model.py:12", "generalizing": True}
    out.write("warning", "recompile", recompile)
    out.write("warning", "graph_break", {"region": "r", "site": "model.py:30", "reason": "data-dependent branch"})
    out.write("info", "cache_prewarmed", {"region": "r"})
    out.write("info", "compile", {"region": 5, "seconds": "slow"})
    out.write("info", "compile", {"region": "r", "compile_id": None, "seconds": float("inf"), "recompile": "yes"})
    out.close()
    run = load([str(tmp_path / "ev.jsonl")])
    cell = run.regions["r"].merged
    assert cell.compiles == 3 and cell.recompiles == 1 and cell.seconds == 0.2
    assert list(cell.reasons) == [("shape", "x", "model.py:12", "yes")]
    assert list(cell.sites) == [("model.py:30", "data-dependent branch", False)]
    assert {k.split(":")[0] for k in run.reading.notes} == {"unknown", "noregion"}
    page = write_report([str(tmp_path / "ev.jsonl")], str(tmp_path / "out")).html
    text = Path(page).read_text()
    assert "model.py:12" in text and "unknown monitor event `cache_prewarmed`" in text


def test_an_empty_file_and_a_missing_one_still_write_a_report_that_says_so(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = cli("report", str(empty), str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "out"))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "empty.jsonl is empty" in res.stderr and "cannot read" in res.stderr and "missing.jsonl" in res.stderr
    assert "no monitor event in the inputs" in res.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert "empty.jsonl is empty" in page and "No region events in the inputs" in page
    trace = json.loads((tmp_path / "out" / "trace.json").read_text())
    assert trace["traceEvents"] == []


def test_all_bad_inputs_at_once_give_one_report_and_no_traceback(tmp_path):
    good = write_events(tmp_path / "events-0.jsonl")
    write_events(tmp_path / "events-1.jsonl", "1", recompiles=0)
    cut = tmp_path / "cut.log"
    cut.write_text(good.read_text()[:-40])
    res = cli("report", str(tmp_path / "events-*.jsonl"), str(cut), str(tmp_path / "nope"), "-o", str(tmp_path / "out"))
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "2 rank(s)" in res.stdout and "cut off or corrupt" in res.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert 'class="bad divergence"' in page
    assert (tmp_path / "out" / "timeline.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")  # drawn in a forked child


def test_without_matplotlib_the_page_and_trace_are_written_and_the_png_names_the_extra(tmp_path):
    events = write_events(tmp_path / "ev.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    (out / "timeline.png").write_bytes(b"stale")
    code = "import sys; sys.modules['matplotlib'] = None; from contract.cli import main; sys.exit(main(sys.argv[1:]))"
    res = subprocess.run(
        [sys.executable, "-c", code, "report", str(events), "-o", str(out)],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "pip install torch-compile-contract[report]" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "trace.json"]
    assert "pip install torch-compile-contract[report]" in (out / "report.html").read_text()


def test_an_output_path_that_is_a_file_is_a_usage_error_in_one_line(tmp_path):
    events = write_events(tmp_path / "ev.jsonl")
    (tmp_path / "taken").write_text("")
    res = cli("report", str(events), "-o", str(tmp_path / "taken"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("compile-contract: error: cannot write the report into")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")), max_size=20))
def test_arbitrary_lines_never_raise(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / "in.log"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    write_report([str(path)], str(path.parent / "out"))
