"""A real headless Chromium driven over the DevTools protocol: load a page, collect console errors, uncaught
exceptions and network requests, evaluate the DOM. Debian's `chromium` (scripts/install-system.sh)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

START_TIMEOUT_S = 30
LOAD_TIMEOUT_S = 60
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
)


def executable() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One browser, one tab; `load(url)` returns what the page logged; `eval(js)` its value. Always `close()`."""

    def __init__(self, exe: str, profile: Path) -> None:
        import websocket  # websocket-client, in the test extra

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port = self._port(profile / "DevToolsActivePort")
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
            page = next(t for t in targets if t["type"] == "page")
            self.ws = websocket.create_connection(
                page["webSocketDebuggerUrl"], timeout=LOAD_TIMEOUT_S, suppress_origin=True
            )
        except BaseException:
            self.close()
            raise
        self._id = 0
        self.messages: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable")

    def _port(self, marker: Path) -> int:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command; events arriving meanwhile are kept in `messages`."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.messages.append(msg)
        raise TimeoutError(method)

    def load(self, url: str) -> dict[str, list[str]]:
        """Navigate and wait for the load event; console errors, exceptions and requests made on the way."""
        self.messages.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while not any(m.get("method") == "Page.loadEventFired" for m in self.messages):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.messages.append(json.loads(self.ws.recv()))
        self.call("Runtime.evaluate", expression="1")  # let late console messages of the load arrive
        return self._collected()

    def _collected(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"errors": [], "requests": []}
        for m in self.messages:
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out["errors"].append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out["errors"].append(p["exceptionDetails"].get("text", "exception"))
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                out["errors"].append(p["entry"].get("text", ""))
            elif method == "Network.requestWillBeSent":
                out["requests"].append(p["request"]["url"])
        return out

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
