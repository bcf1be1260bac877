"""Shared fixtures: a contract writer and clean Dynamo state around every test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_contract(tmp_path: Path) -> Callable[[str], Path]:
    """Write a contract document into tmp_path and return its path."""

    def write(text: str, name: str = "contract.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture(autouse=True)
def _reset_dynamo():
    """Each test starts and ends with empty Dynamo caches (only if torch._dynamo is already loaded)."""
    import sys

    yield
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()


class RedisServer:
    """A real `redis-server` on 127.0.0.1 and a free port, no persistence; `stop()` takes it down for good."""

    def __init__(self, *extra: str) -> None:
        import shutil
        import socket
        import subprocess
        import time

        from contract.checks.cache.remote import ping_redis

        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed (Debian package redis-server)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.password = extra[extra.index("--requirepass") + 1] if "--requirepass" in extra else None
        self.proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while ping_redis("127.0.0.1", self.port, password=self.password, timeout_s=0.5) is not None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-server did not come up on port {self.port}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def start_redis():
    """Start real Redis servers for one test (`start_redis("--requirepass", "pw")`); all are stopped after it."""
    servers: list[RedisServer] = []

    def start(*extra: str) -> RedisServer:
        servers.append(RedisServer(*extra))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def tmpfs(tmp_path: Path):
    """Mount a real tmpfs (`tmpfs("size=1m,noexec")`) under tmp_path; root only (skips otherwise); unmounted after."""
    import os
    import subprocess

    mounted: list[Path] = []

    def mount(options: str = "size=1m") -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a real tmpfs needs root")
        point = tmp_path / f"tmpfs{len(mounted)}"
        point.mkdir()
        res = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True, text=True
        )
        if res.returncode != 0:
            pytest.skip(f"cannot mount tmpfs here: {res.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", str(point)], check=False)
