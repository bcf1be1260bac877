"""Which compiles the report calls unfinished: a `compile_started` no end closed, per rank and process. Lines in the
event file's envelope (`monitor.events`); the SIGKILL and two-rank cases run real processes in
tests/monitor/test_stall_processes.py."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from monitor.events import VERSION
from monitor.report import load, write_report

_clock = itertools.count(1_800_000_000)


class Stream:
    """Appends one process's events to an event file (rank and pid in every line's envelope, as the monitor writes)."""

    def __init__(self, path: Path, rank: str = "0", pid: int = 100) -> None:
        self.path, self.rank, self.pid = path, int(rank), pid

    def write(self, event: str, **fields: Any) -> None:
        head = {"v": VERSION, "ts": float(next(_clock)), "event": event, "level": "info", "rank": self.rank}
        head |= {"local_rank": self.rank, "world_size": 3, "pid": self.pid}
        with open(self.path, "a") as fh:
            fh.write(json.dumps({**head, **fields}) + "\n")

    def started(self, cid: str, region: str = "layers", **extra: Any) -> None:
        self.write("compile_started", region=region, module="layers.0", compile_id=cid, trigger="dynamo", **extra)


def stream(tmp_path: Path, name: str, rank: str = "0", pid: int = 100) -> Stream:
    return Stream(tmp_path / name, rank, pid)


def test_a_compile_closed_by_its_compile_event_or_a_later_start_is_not_unfinished(tmp_path):
    s = stream(tmp_path, "a.jsonl")
    s.started("0/0")
    s.write("compile", region="layers", compile_id="0/0", seconds=0.5, recompile=False)
    s.started("1/0")  # its end line was lost (a hook fault): the next start closes it, one compile at a time
    s.started("2/0", region="<unclaimed>")
    s.write("compile_finished", region="<unclaimed>", compile_id="2/0", seconds=0.1)
    s.started("0/1")
    run = load([str(tmp_path / "a.jsonl")])
    assert [(u.region, u.compile_id) for u in run.unfinished] == [("layers", "0/1")]


def test_monitor_stopped_closes_compiles_except_the_one_it_names_interrupted(tmp_path):
    s = stream(tmp_path, "a.jsonl")
    s.started("0/0", code="forward", file="model.py", line=12)
    s.write(
        "compile_interrupted",
        region="layers",
        compile_id="0/0",
        by="SIGTERM",
        seconds=42.5,
        phase="torch/_inductor/select_algorithm.py:10 autotune",
    )
    s.write("monitor_stopped", summary={})
    other = stream(tmp_path, "b.jsonl", rank="1")
    other.started("0/0")
    other.write("monitor_stopped", summary={})
    run = load([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")])
    (u,) = run.unfinished
    assert (u.rank, u.interrupted, u.seconds, u.code) == ("0", "SIGTERM", 42.5, "forward (model.py:12)")
    assert u.phase.startswith("torch/_inductor/select_algorithm.py")


def test_a_restarted_process_of_the_same_rank_does_not_close_the_dead_ones_compile(tmp_path):
    dead = stream(tmp_path, "a.jsonl", pid=100)
    dead.started("0/0")
    restarted = stream(tmp_path, "a.jsonl", pid=200)
    restarted.started("0/0")
    restarted.write("compile", region="layers", compile_id="0/0", seconds=1.0, recompile=False)
    run = load([str(tmp_path / "a.jsonl")])
    assert [(u.pid, u.compile_id) for u in run.unfinished] == [(100, "0/0")]


def test_the_page_the_trace_and_the_notes_name_the_rank_still_compiling_while_its_peers_had_finished(tmp_path):
    for rank in ("0", "1", "2"):
        s = stream(tmp_path, f"events-{rank}.jsonl", rank=rank, pid=100 + int(rank))
        s.started("0/0")
        s.write("compile", region="layers", compile_id="0/0", seconds=0.5, recompile=False)
        s.started("0/1")
        if rank != "2":
            s.write("compile", region="layers", compile_id="0/1", seconds=0.5, recompile=True)
    out = write_report([str(tmp_path / "events-*.jsonl")], str(tmp_path / "report"))
    headline = "rank(s) 2 were still compiling while rank(s) 0, 1 had finished compiling"
    assert any(headline in note for note in out.notes)
    page = Path(out.html).read_text()
    assert headline in page and page.index('id="unfinished"') < page.index('id="identity"')
    trace = json.loads(Path(out.trace).read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in trace if e["name"] == "process_name"}
    assert [(names[e["pid"]], e["name"], e["args"]["compile_id"]) for e in trace if e["ph"] == "B"] == [
        ("rank 2", "unfinished layers", "0/1")
    ]
    assert len([e for e in trace if e["ph"] == "X"]) == 5
