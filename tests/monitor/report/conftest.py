"""Real monitored runs whose event files the report tests render: the demo, the hazard demo that breaches, and a
2-rank gloo job where one rank recompiles. Each runs once per session, in its own processes, with a timeout."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUN_TIMEOUT_S = 240
"""Longest a demo run or a rank may take (a CPU box shared with other work, eager backend)."""
EVENTS = '\n[monitor]\nevents_path = "events/events-{rank}.jsonl"\n'


@dataclass(frozen=True)
class RunDir:
    """A finished run: its directory, event files, stdout and the per-region summary the program printed."""

    path: Path
    files: list[Path]
    stdout: str
    summary: dict[str, dict[str, str]]


def env() -> dict[str, str]:
    """The subprocess environment: this venv's packages, no inherited rank variables."""
    out = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    out["PYTHONPATH"] = str(ROOT)
    return out


def demo_contract(src: str, dest: Path, *, on_breach: str | None = None) -> Path:
    """A shipped demo contract on the eager backend (fast on CPU) with an events file next to it."""
    text = (ROOT / "contracts" / src).read_text().replace('backend = "inductor"', 'backend = "eager"')
    if on_breach:
        text = text.replace('on_breach = "alert"', f'on_breach = "{on_breach}"')
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / src
    path.write_text(text + EVENTS)
    return path


def run_demo(contract: Path, *args: str) -> RunDir:
    res = subprocess.run(
        [sys.executable, "-m", "contract.demo", str(contract), *args],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    summary = {
        m.group(1): dict(kv.split("=", 1) for kv in m.group(2).split())
        for m in re.finditer(r"^region (\S+): (.*)$", res.stdout, re.M)
    }
    files = sorted((contract.parent / "events").glob("events-*.jsonl"))
    return RunDir(contract.parent, files, res.stdout, summary)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> RunDir:
    """`python -m contract.demo` on the clean demo contract (checked, enforced, 4 monitored steps)."""
    return run_demo(demo_contract("demo.toml", tmp_path_factory.mktemp("demo")), "--steps", "4")


@pytest.fixture(scope="session")
def hazard_run(tmp_path_factory) -> RunDir:
    """The hazard demo (Python-int counters in the router): a recompile storm, a breach, the region sent eager."""
    contract = demo_contract("demo-hazard.toml", tmp_path_factory.mktemp("hazard"), on_breach="eager")
    return run_demo(contract, "--skip-check", "--steps", "6")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RANKS_CONTRACT = """[contract]
name = "two-rank-net"
[defaults]
backend = "eager"
dynamic = false
recompile_budget = 0
[[region]]
name = "body"
module = "body"
[[region]]
name = "head"
module = "head"
[[region]]
name = "gate"
module = "gate"
"""


@pytest.fixture(scope="session")
def ranks_run(tmp_path_factory) -> RunDir:
    """Two plain processes (MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE, as srun starts them), gloo; rank 1 recompiles."""
    out = tmp_path_factory.mktemp("ranks")
    contract = out / "contract.toml"
    contract.write_text(RANKS_CONTRACT + EVENTS)
    port = str(free_port())
    procs = []
    for rank in range(2):
        rank_env = {**env(), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "RANK": str(rank), "WORLD_SIZE": "2"}
        log = open(out / f"rank{rank}.log", "w")
        worker = Path(__file__).with_name("rank_worker.py")
        procs.append(
            (
                subprocess.Popen(
                    [sys.executable, str(worker), str(contract)],
                    env=rank_env,
                    cwd=ROOT,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                ),
                log,
            )
        )
    codes = []
    try:
        for proc, _ in procs:
            codes.append(proc.wait(timeout=RUN_TIMEOUT_S))
    finally:
        for proc, log in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
    logs = "\n".join((out / f"rank{r}.log").read_text()[-2000:] for r in range(2))
    assert codes == [0, 0], logs
    return RunDir(out, sorted((out / "events").glob("events-*.jsonl")), logs, {})
