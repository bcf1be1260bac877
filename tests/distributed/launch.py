"""Start the ranks of a real job on this machine, as srun does (plain processes with MASTER_ADDR/MASTER_PORT/RANK/
WORLD_SIZE) or through torchrun, and collect what each rank printed; nothing outlives its timeout."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests import ROOT


@dataclass
class RankRun:
    """What one rank did."""

    rank: int
    returncode: int | None
    """None: still running at the deadline (killed)."""
    stdout: str
    stderr: str
    seconds: float
    """From the launch to this rank's exit."""
    ended_at: float = 0.0
    """Wall-clock time (epoch seconds) of this rank's exit, as the launcher saw it."""

    def printed_time(self, tag: str) -> float | None:
        """The epoch time a rank printed as `TAG <time>`, if it did."""
        for line in self.stdout.splitlines():
            if line.startswith(tag + " "):
                return float(line.split()[1])
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_env(world: int, rank: int, port: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment srun-style launch gives rank `rank` (torch's own variables, no torchrun agent)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHELASTIC_", "RANK", "LOCAL_RANK"))}
    env.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra or {})
    return env


def run_plain(argv: list[str], world: int, *, timeout: float, env_for=None, cwd: Path = ROOT) -> list[RankRun]:
    """`world` processes of `argv` (after `python`), srun style; `env_for(rank)` adds per-rank variables."""
    port, start = free_port(), time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            env=job_env(world, r, port, env_for(r) if env_for else None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(world)
    ]
    return _collect(procs, start, timeout)


def run_torchrun(
    argv: list[str], world: int, *, timeout: float, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[int | None, str, str]:
    """One torchrun job of `world` local ranks (standalone rendezvous, no restart): (its exit code, stdout, stderr);
    each rank's lines carry torchrun's `[rankN]:` prefix."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={world}",
        "--max-restarts=0",
        "--tee=3",
        *argv,
    ]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHELASTIC_", "MASTER_", "RANK", "WORLD_SIZE"))}
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**base, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        return None, out, err


def rank_lines(text: str, rank: int) -> str:
    """The lines torchrun prefixed with rank N's tag, without the tag."""
    prefixes = (f"[rank{rank}]:", f"[default{rank}]:")  # torch 2.11-2.13 write the role and local rank
    return "\n".join(line.split(":", 1)[1] for line in text.splitlines() if line.startswith(prefixes))


def _collect(procs: list[subprocess.Popen], start: float, timeout: float) -> list[RankRun]:
    runs: list[RankRun | None] = [None] * len(procs)
    deadline = start + timeout
    while any(r is None for r in runs):
        for i, p in enumerate(procs):
            if runs[i] is None and p.poll() is not None:
                out, err = p.communicate()
                runs[i] = RankRun(i, p.returncode, out, err, time.monotonic() - start, time.time())
        if time.monotonic() > deadline:
            for i, p in enumerate(procs):
                if runs[i] is None:
                    p.kill()
                    out, err = p.communicate()
                    runs[i] = RankRun(i, None, out, err, time.monotonic() - start, time.time())
        time.sleep(0.05)
    return [r for r in runs if r is not None]
