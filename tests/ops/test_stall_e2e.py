"""End to end on a real stalled compile: two gloo ranks (plain processes), rank 1's compile blocked inside its backend
while rank 0 has compiled and waits in its all-reduce -> real Prometheus with the repo's rules -> real Alertmanager
-> loopback webhook. CompileStalled and CompileWhilePeersWait fire for rank 1 and resolve once its compile returns.

The alerts' thresholds are cut from minutes to seconds (CompileStalled 180 s -> 3 s, CompileWhilePeersWait 20 s ->
2 s and its 30 s idle window -> 3 s); everything else is as shipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.ops.stack import (
    ALERTS,
    REPO,
    Alertmanager,
    Prometheus,
    Webhook,
    free_port,
    shorten_for,
    stop_process,
    tool,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

JOB = "e2e-stall"
CONTRACT = """[contract]
name = "e2e-stall"
[defaults]
backend = "cc_file_gate"
[[region]]
name = "body"
module = "body"
[monitor]
addr = "127.0.0.1"
port = {port}
"""
START_S = 180
ALERT_S = 60
CUTS = {
    "CompileStalled": [("> 180)", "> 3)")],
    "CompileWhilePeersWait": [('{rank=""} > 20', '{rank=""} > 2'), ("[30s:]", "[3s:]")],
}
"""Per alert: (production text, test text) in its expression."""


def rules_for_test() -> dict:
    """The shipped rules with `for` cut to 1 s and the stall thresholds cut to seconds (each cut must apply)."""
    rules = shorten_for(yaml.safe_load(ALERTS.read_text()), "1s")
    for group in rules["groups"]:
        for rule in group["rules"]:
            for old, new in CUTS.get(rule.get("alert", ""), []):
                assert old in rule["expr"], (rule["alert"], old)
                rule["expr"] = rule["expr"].replace(old, new)
    return rules


def start_ranks(workdir: Path, state: Path) -> tuple[list[subprocess.Popen], list[str]]:
    base, master = free_port(2), free_port(1)
    (workdir / "contract.toml").write_text(CONTRACT.format(port=base))
    procs = []
    for rank in ("0", "1"):
        env = {
            **os.environ,
            "RANK": rank,
            "LOCAL_RANK": rank,
            "WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(master),
            "STALL_RANK": "1",
            "PYTHONPATH": str(REPO),
        }
        with open(workdir / f"rank{rank}.log", "wb") as log:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tests.monitor.stall_worker",
                        str(workdir / "contract.toml"),
                        str(state),
                        "step",
                    ],
                    cwd=REPO,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
    return procs, [f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"]


def test_a_real_stalled_compile_pages_compile_stalled_and_compile_while_peers_wait_for_its_rank(tmp_path):
    missing = [b for b in ("prometheus", "prometheus-alertmanager") if tool(b) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (Debian packages prometheus, prometheus-alertmanager)")
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(rules_for_test()))
    webhook = Webhook().start()
    daemons: list = []
    procs: list[subprocess.Popen] = []
    try:
        procs, targets = start_ranks(tmp_path, state)
        am = Alertmanager(tmp_path, webhook.url)
        daemons.append(am)
        am.wait_ready()

        def ready() -> bool:
            for rank, proc in enumerate(procs):
                assert proc.poll() is None, (tmp_path / f"rank{rank}.log").read_text()[-3000:]
            return (state / "rank0.compiled").exists() and (state / "rank1.compiling").exists()

        wait_for("rank 0 compiled and rank 1 stuck in its compile", ready, START_S, 0.5)
        prom = Prometheus(
            tmp_path, targets, job=JOB, alertmanager=f"127.0.0.1:{am.port}", rule_files=[tmp_path / "alerts.yml"]
        )
        daemons.append(prom)
        prom.wait_ready()
        stalled = wait_for("CompileStalled at the webhook", lambda: webhook.alerts("CompileStalled"), ALERT_S)
        assert {(a["labels"]["region"], a["labels"].get("rank")) for a in stalled} == {("body", "1")}
        assert stalled[0]["labels"]["severity"] == "critical"
        assert stalled[0]["annotations"]["runbook_url"] == "ops/runbooks/CompileStalled.md"
        waiting = wait_for(
            "CompileWhilePeersWait at the webhook", lambda: webhook.alerts("CompileWhilePeersWait"), ALERT_S
        )
        assert {(a["labels"]["region"], a["labels"].get("rank")) for a in waiting} == {("body", "1")}
        assert "while these ranks compiled nothing for 30 s: [rank 0]" in waiting[0]["annotations"]["description"]
        ages = {
            s["metric"]["instance"]: float(s["value"][1])
            for s in prom.query("torch_compile_compile_in_progress_seconds{region='body'}")
        }
        assert ages[targets[0]] == 0 and ages[targets[1]] > 3
        assert not (state / "rank0.done").exists()  # rank 0 still waits in its all-reduce
        (state / "release").touch()
        wait_for(
            "both ranks done", lambda: (state / "rank0.done").exists() and (state / "rank1.done").exists(), START_S
        )
        for name in ("CompileStalled", "CompileWhilePeersWait"):
            wait_for(f"{name} resolved at the webhook", lambda name=name: webhook.alerts(name, "resolved"), ALERT_S)
        snapshot = json.loads((state / "rank1.done").read_text())["snapshot"]["body"]
        assert snapshot["compiles"] == 1 and snapshot["compile_seconds"] > 3
    finally:
        (state / "release").touch()
        (state / "stop").touch()
        for proc in procs:
            stop_process(proc)
        for daemon in reversed(daemons):
            daemon.stop()
        webhook.stop()
