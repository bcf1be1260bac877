"""Real Prometheus, Alertmanager and a loopback webhook receiver for the ops tests: free ports, bounded waits."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import yaml

from tests import ROOT as ROOT_DIR

REPO = ROOT_DIR
OPS = REPO / "ops"
ALERTS = OPS / "prometheus" / "alerts.yml"
T = TypeVar("T")


def tool(name: str) -> str | None:
    """Path of an installed binary (Debian packages prometheus / prometheus-alertmanager), None if missing."""
    return shutil.which(name)


def free_port(pairs: int = 1) -> int:
    """A loopback port p with p .. p+pairs-1 all free right now (base port + LOCAL_RANK needs consecutive ports)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + pairs < 65535 and all(_bindable(base + i) for i in range(pairs)):
            return base
    raise RuntimeError(f"no {pairs} consecutive free loopback ports found")


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, interval: float = 0.2) -> T:
    """Poll `probe` until it returns something truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = probe()
            if result:
                return result
        except (OSError, ValueError, KeyError) as exc:
            last_error = exc
        time.sleep(interval)
    raise AssertionError(
        f"timed out after {timeout:.0f} s waiting for {what}" + (f" (last error: {last_error})" if last_error else "")
    )


def http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode())


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Terminate, then kill if it does not exit in time; always reaps it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


def shorten_for(rules: dict[str, Any], duration: str) -> dict[str, Any]:
    """A copy of a rule file with every alert's `for` cut to `duration` (production values would take minutes)."""
    out = json.loads(json.dumps(rules))
    for group in out["groups"]:
        for rule in group["rules"]:
            if "alert" in rule and "for" in rule:
                rule["for"] = duration
    return out


@dataclass
class Webhook:
    """Alertmanager webhook receiver on loopback (http.server in a thread): keeps every posted payload."""

    payloads: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def start(self) -> Webhook:
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with hook._lock:
                    hook.payloads.append({"path": self.path, **json.loads(body or b"{}")})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_port}"

    def alerts(self, name: str, status: str = "firing") -> list[dict[str, Any]]:
        """Alerts named `name` with that status, across every payload received so far."""
        with self._lock:
            return [
                a
                for p in self.payloads
                for a in p.get("alerts", [])
                if a["labels"].get("alertname") == name and a["status"] == status
            ]

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


class Alertmanager:
    """`prometheus-alertmanager` on 127.0.0.1 with the repo's example routing, receivers pointed at `webhook_url`."""

    def __init__(self, workdir: Path, webhook_url: str) -> None:
        exe = tool("prometheus-alertmanager")
        assert exe is not None
        config = yaml.safe_load((OPS / "alertmanager" / "alertmanager.yml").read_text())
        for receiver in config["receivers"]:
            for hook in receiver.get("webhook_configs", []):
                hook["url"] = webhook_url + urllib.parse.urlparse(hook["url"]).path
        route = config["route"]
        for r in [route, *route.get("routes", [])]:  # seconds, not the example's 10-30 s waits
            for key in ("group_wait", "group_interval"):
                if key in r or r is route:
                    r[key] = "1s"
        route["repeat_interval"] = "1h"
        (workdir / "alertmanager.yml").write_text(yaml.safe_dump(config))
        self.port = free_port()
        self.log = open(workdir / "alertmanager.log", "wb")
        self.proc = subprocess.Popen(
            [
                exe,
                f"--config.file={workdir / 'alertmanager.yml'}",
                f"--storage.path={workdir / 'am-data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 20) -> None:
        wait_for("Alertmanager /-/ready", lambda: self.proc.poll() is None and _ok(self.url + "/-/ready"), timeout)

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.close()


class Prometheus:
    """`prometheus` on 127.0.0.1: the repo's example config with scrape/evaluation every 1 s, given targets."""

    def __init__(
        self, workdir: Path, targets: list[str], *, job: str, alertmanager: str | None, rule_files: list[Path]
    ) -> None:
        exe = tool("prometheus")
        assert exe is not None
        example = yaml.safe_load((OPS / "prometheus" / "prometheus.yml").read_text())
        scrape = dict(example["scrape_configs"][0])
        scrape.update(
            {
                "job_name": job,
                "scrape_interval": "1s",
                "scrape_timeout": "1s",
                "static_configs": [
                    {"targets": targets, "labels": example["scrape_configs"][0]["static_configs"][0]["labels"]}
                ],
            }
        )
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [scrape],
        }
        if alertmanager:
            config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]}
        (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.port = free_port()
        self.log = open(workdir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [
                exe,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'prom-data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--rules.alert.resend-delay=1s",
                "--web.enable-lifecycle",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 20) -> None:
        wait_for("Prometheus /-/ready", lambda: self.proc.poll() is None and _ok(self.url + "/-/ready"), timeout)

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; raises on an API error (bad PromQL), returns the result vector."""
        data = http_json(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        if data.get("status") != "success":
            raise AssertionError(f"query failed: {expr}: {data}")
        return data["data"]["result"]

    def alerts(self, name: str, state: str = "firing") -> list[dict[str, Any]]:
        data = http_json(f"{self.url}/api/v1/alerts")
        return [a for a in data["data"]["alerts"] if a["labels"]["alertname"] == name and a["state"] == state]

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.close()


def _ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False
