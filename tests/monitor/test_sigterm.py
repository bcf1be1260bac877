"""SIGTERM: the final snapshot is written before the signal takes its course (default action or the user's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import torch
from torch import nn

from tests import ROOT

SNAPSHOT = '[monitor]\nsnapshot_path = "snap/rank{rank}.prom"\n'
REGION = '[[region]]\nname = "lin"\nmodule = "lin"\n'

JOB = """
import os, signal, sys
from pathlib import Path
import torch
from torch import nn
import monitor
from tests.monitor.conftest import HEADER, bind_applied

out = Path(sys.argv[1])
(out / "c.toml").write_text(HEADER + sys.argv[2])
net = nn.Module()
net.lin = nn.Linear(8, 8)
mon = monitor.start(bind_applied(out / "c.toml", net), serve=False)
with torch.no_grad():
    net.lin(torch.ones(2, 8))
os.kill(os.getpid(), signal.SIGTERM)
print("survived SIGTERM", flush=True)
"""


@pytest.fixture
def sigterm_restored():
    """Whatever a test installs, the test process gets its own SIGTERM disposition back."""
    original = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, original)


def test_sigterm_with_the_default_action_writes_the_snapshot_and_the_process_still_dies_by_sigterm(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", JOB, str(tmp_path), REGION + SNAPSHOT],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGTERM, proc.stderr[-2000:]
    assert "survived" not in proc.stdout
    assert 'torch_compile_compiles_total{rank="0",region="lin"} 1.0' in (tmp_path / "snap" / "rank0.prom").read_text()


def test_a_user_sigterm_handler_runs_after_the_snapshot_and_stop_puts_it_back(started, tmp_path, sigterm_restored):
    calls = []

    def user_handler(signum, frame):
        calls.append((signum, (tmp_path / "snap" / "rank0.prom").exists()))

    signal.signal(signal.SIGTERM, user_handler)
    net = nn.Module()
    net.lin = nn.Linear(8, 8)
    _, mon = started(REGION + SNAPSHOT, net)
    assert signal.getsignal(signal.SIGTERM) != user_handler
    with torch.no_grad():
        net.lin(torch.ones(2, 8))
    os.kill(os.getpid(), signal.SIGTERM)
    assert calls == [(signal.SIGTERM, True)]
    assert 'region="lin"} 1.0' in (tmp_path / "snap" / "rank0.prom").read_text()
    mon.stop()
    assert signal.getsignal(signal.SIGTERM) is user_handler


def test_an_ignored_sigterm_stays_ignored_and_a_monitor_without_a_snapshot_installs_nothing(started, sigterm_restored):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    net = nn.Module()
    net.lin = nn.Linear(8, 8)
    started(REGION + SNAPSHOT, net)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    started(REGION, net)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
