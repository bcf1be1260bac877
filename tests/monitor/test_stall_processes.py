"""Stalled compiles in real processes: SIGTERM, interpreter exit and SIGKILL mid-compile, two gloo ranks of which one
is still compiling while the other waits in its all-reduce, and a compile held by Inductor cache locks another
process owns. Every process is bounded by a timeout and killed at the end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from monitor.report import write_report
from tests import ROOT
from tests.monitor.test_exporter import free_port

START_S = 180.0
"""Longest wait for a process to import torch, bind the contract and reach its compile (a loaded 2-core machine)."""
AGE = "torch_compile_compile_in_progress_seconds"
LOCK_BUDGET_S = 20
CONTRACT = """[contract]
name = "stalls"
[defaults]
backend = "{backend}"
[[region]]
name = "body"
module = "body"
{region}
[monitor]
port = 0
events_path = "events/events-{{rank}}.jsonl"
snapshot_path = "snap/rank{{rank}}.prom"
"""


@dataclass
class Job:
    """Processes of one test, their state directory; every process is killed when the test ends."""

    dir: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def state(self) -> Path:
        return self.dir / "state"

    def contract(self, backend: str = "cc_file_gate", region: str = "") -> Path:
        path = self.dir / "contract.toml"
        path.write_text(CONTRACT.format(backend=backend, region=region))
        return path

    def start(self, name: str, mode: str, **env: str) -> subprocess.Popen:
        self.logs[name] = self.dir / f"{name}.log"
        environ = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
        environ.update({"PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **env})
        with open(self.logs[name], "wb") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.monitor.stall_worker",
                    str(self.dir / "contract.toml"),
                    str(self.state),
                    mode,
                ],
                cwd=ROOT,
                env=environ,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.procs[name] = proc
        return proc

    def wait(self, name: str, timeout: float = START_S) -> Path:
        """Wait for STATE/name; a process that died meanwhile fails the wait with its log."""
        path = self.state / name
        deadline = time.monotonic() + timeout
        while not path.exists():
            dead = [n for n, p in self.procs.items() if p.poll() is not None and p.returncode != 0]
            assert not dead, f"{dead} exited: {self.logs[dead[0]].read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"timed out waiting for {name}"
            time.sleep(0.1)
        return path

    def events(self, rank: str = "0") -> list[dict]:
        return [json.loads(line) for line in (self.dir / "events" / f"events-{rank}.jsonl").read_text().splitlines()]

    def kill_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    j = Job(tmp_path)
    j.state.mkdir()
    try:
        yield j
    finally:
        (j.state / "release").touch()
        (j.state / "stop").touch()
        j.kill_all()


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read().decode()


def sample(text: str, series: str) -> float:
    (line,) = [line for line in text.splitlines() if line.startswith(series + " ")]
    return float(line.rsplit(" ", 1)[1])


def test_sigterm_mid_compile_names_the_compile_in_the_event_file_and_the_final_snapshot(job):
    job.contract()
    proc = job.start("rank0", "step", RANK="0")
    job.wait("rank0.compiling")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM, job.logs["rank0"].read_text()[-2000:]
    (event,) = [e for e in job.events() if e["event"] == "compile_interrupted"]
    assert (event["by"], event["region"], event["module"], event["compile_id"]) == ("SIGTERM", "body", "body", "0/0")
    assert event["seconds"] >= 0.5 and event["at"].startswith("monitor/stall_worker.py:")
    assert event["code"] == "forward" and event["file"].endswith("stall_worker.py")
    snapshot = (job.dir / "snap" / "rank0.prom").read_text()
    assert sample(snapshot, f'{AGE}{{rank="0",region="body"}}') >= 0.5


def test_interpreter_exit_while_a_thread_compiles_writes_which_compile_was_running(job):
    job.contract()
    proc = job.start("rank0", "thread-exit", RANK="0")
    assert proc.wait(timeout=START_S) == 0, job.logs["rank0"].read_text()[-2000:]
    (event,) = [e for e in job.events() if e["event"] == "compile_interrupted"]
    assert (event["by"], event["region"], event["compile_id"]) == ("stop", "body", "0/0")
    assert event["thread"] != "MainThread" and event["at"].startswith("monitor/stall_worker.py:")
    assert [e["event"] for e in job.events()][-1] == "monitor_stopped"


def test_a_rank_killed_mid_compile_leaves_an_event_file_whose_report_names_its_compile(job, tmp_path):
    job.contract()
    proc = job.start("rank0", "step", RANK="0")
    job.wait("rank0.compiling")
    proc.kill()
    proc.wait(timeout=30)
    names = [e["event"] for e in job.events()]
    assert names == ["monitor_started", "compile_started"]
    out = write_report([str(job.dir / "events" / "events-0.jsonl")], str(tmp_path / "report"))
    (unfinished,) = out.run.unfinished
    assert (unfinished.rank, unfinished.region, unfinished.compile_id) == ("0", "body", "0/0")
    assert "unfinished compile: rank 0: region body, compile 0/0 (dynamo), compiling forward" in out.notes[0]
    page = Path(out.html).read_text()
    assert page.index('id="unfinished"') < page.index('id="notes"') and "0/0" in page
    trace = json.loads(Path(out.trace).read_text())["traceEvents"]
    assert [e["name"] for e in trace if e["ph"] == "B"] == ["unfinished body"]


def test_of_two_gloo_ranks_the_one_still_compiling_is_visible_live_and_named_by_the_report(job, tmp_path):
    job.contract()
    master = str(free_port())
    env = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": master, "STALL_RANK": "1"}
    for rank in ("0", "1"):
        job.start(f"rank{rank}", "step", RANK=rank, LOCAL_RANK=rank, **env)
    job.wait("rank0.compiled")  # rank 0 compiled and waits in its all-reduce
    job.wait("rank1.compiling")
    ports = {r: json.loads(job.wait(f"rank{r}.ready").read_text())["port"] for r in ("0", "1")}
    first = scrape(ports["1"])
    time.sleep(1.0)
    second = scrape(ports["1"])
    assert 0 < sample(first, f'{AGE}{{region="body"}}') < sample(second, f'{AGE}{{region="body"}}')
    assert sample(scrape(ports["0"]), f'{AGE}{{region="body"}}') == 0.0
    assert not (job.state / "rank0.done").exists()  # the all-reduce waits for the compiling rank
    job.kill_all()
    files = [str(job.dir / "events" / f"events-{r}.jsonl") for r in ("0", "1")]
    out = write_report(files, str(tmp_path / "report"))
    assert [(u.rank, u.region) for u in out.run.unfinished] == [("1", "body")]
    assert "rank(s) 1 were still compiling while rank(s) 0 had finished compiling" in out.notes[1]
    assert "rank(s) 1 were still compiling while rank(s) 0 had finished" in Path(out.html).read_text()
    trace = json.loads(Path(out.trace).read_text())
    opened = [e for e in trace["traceEvents"] if e["ph"] == "B"]
    ranks = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert [ranks[e["pid"]] for e in opened] == ["rank 1"]


@pytest.mark.slow
def test_a_compile_waiting_for_a_cache_lock_another_process_holds_breaches_its_budget_and_names_the_lock(job):
    cache = job.dir / "inductor-cache"
    inductor = {"TORCHINDUCTOR_CACHE_DIR": str(cache), "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    job.start("holder", "hold-locks", **inductor)
    locks = json.loads(job.wait("held").read_text())["locks"]
    assert locks
    # The budget outlasts tracing and lowering (~5 s here), so it fires while the compile waits for the lock.
    job.contract(backend="inductor", region=f"compile_seconds_budget = {LOCK_BUDGET_S}")
    cold = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
    job.start("rank0", "step", RANK="0", **inductor, **cold)
    port = json.loads(job.wait("rank0.ready").read_text())["port"]
    deadline = time.monotonic() + START_S
    while not [e for e in job.events() if e["event"] == "budget_exceeded"]:
        assert time.monotonic() < deadline and job.procs["rank0"].poll() is None, job.logs["rank0"].read_text()
        time.sleep(0.2)
    (breach,) = [e for e in job.events() if e["event"] == "budget_exceeded"]
    assert breach["in_progress"] is True and breach["waiting_on"] in locks
    assert breach["phase"].startswith("torch/_inductor/")
    assert sample(scrape(port), f'{AGE}{{region="body"}}') > LOCK_BUDGET_S
    holder = job.procs.pop("holder")
    holder.kill()  # the lock holder dies: flock releases its locks, the compile goes on
    holder.wait(timeout=30)
    job.wait("rank0.done")
    assert [e["region"] for e in job.events() if e["event"] == "compile"] == ["body"]
    assert sample(scrape(port), f'{AGE}{{region="body"}}') == 0.0
