"""The monitor's event file: every event it logs, one JSON object per line, for `compile-contract report`.

Events only happen on compiles (never on a steady-state step), so a line-buffered append per event is cheap enough.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.binding.targets import Binding
    from contract.document.load import Contract

VERSION = 1
"""`v` of every line: what `monitor.report` knows how to read (bump on an incompatible change of the envelope)."""
ENVELOPE = ("v", "ts", "event", "level", "rank", "local_rank", "world_size", "pid")
"""Keys every line starts with; an event field of the same name is dropped (the envelope is the schema)."""


class EventFile:
    """Appends events to one file, opened once; never raises (a failure goes to `on_error`, the line is lost)."""

    def __init__(
        self,
        path: str,
        rank_info: Mapping[str, str],
        *,
        on_error: Callable[[BaseException], None],
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.template = path
        """The configured path, `{rank}` kept (every rank's file)."""
        self.path = path.replace("{rank}", rank_info.get("rank", "0"))
        self._ident = {k: _num(rank_info.get(k, "")) for k in ("rank", "local_rank", "world_size")}
        self._on_error = on_error
        self._wall = wall
        self._pid = os.getpid()
        """The process that opened the file: a forked child (DataLoader worker) never writes to it."""
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        try:
            parent = os.path.dirname(self.path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            self._file = open(self.path, "a", buffering=1, encoding="utf-8")
        except Exception as exc:
            on_error(exc)

    @property
    def opened(self) -> bool:
        """The file could be opened (else every write is a no-op and no report can be pointed at)."""
        return self._file is not None

    def write(self, level: str, event: str, fields: Mapping[str, Any]) -> None:
        """Append one event line (with version, wall time and rank identity) unless the file is unusable."""
        if self._file is None or os.getpid() != self._pid:
            return
        try:
            head = {"v": VERSION, "ts": self._wall(), "event": event, "level": level, **self._ident, "pid": self._pid}
            line = json.dumps({**head, **{k: v for k, v in fields.items() if k not in head}}, default=str)
            with self._lock:
                self._file.write(line + "\n")
        except Exception as exc:
            self._on_error(exc)

    def close(self) -> None:
        """Close the file (only in the process that opened it: a child's close would flush nothing of its own)."""
        if self._file is None or os.getpid() != self._pid:
            return
        try:
            with self._lock:
                self._file.close()
        except Exception as exc:
            self._on_error(exc)
        self._file = None


def open_events(
    contract: Contract, rank_info: Mapping[str, str], *, on_error: Callable[[BaseException], None]
) -> EventFile | None:
    """The contract's `[monitor] events_path` file, opened once (relative to the contract file); None when unset or
    when it cannot be opened (that failure went to `on_error`: the run goes on without it)."""
    if not contract.monitor.events_path:
        return None
    events = EventFile(str(contract.resolve_path(contract.monitor.events_path)), rank_info, on_error=on_error)
    return events if events.opened else None


def started_fields(binding: Binding, port: int | None, events: EventFile | None) -> dict[str, Any]:
    """`monitor_started` fields: the contract (name, sha256, path, each region's budgets) and the environment."""
    contract = binding.contract
    settings = {
        name: {
            "recompile_budget": rb.region.recompile_budget,
            "graph_break_budget": rb.region.graph_break_budget,
            "on_breach": rb.region.on_breach,
            "backend": rb.region.backend,
            "state": rb.state,
        }
        for name, rb in binding.regions.items()
    }
    return {
        "contract": contract.name,
        "contract_sha256": contract.sha256,
        "contract_path": str(contract.path),
        "regions": len(binding.regions),
        "port": port,
        **environment(),
        **({"events_path": events.path} if events is not None else {}),
        "region_settings": settings,
    }


def environment() -> dict[str, Any]:
    """What the report shows as the run's environment: torch, python, host (no secrets, no environment dump)."""
    torch = sys.modules.get("torch")
    return {
        "torch": getattr(torch, "__version__", None) if torch is not None else None,
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "platform": platform.platform(terse=True),
    }


def report_hint(path: str) -> str:
    """The command that renders a report from these event files (every rank's: `{rank}` becomes a glob, quoted: the
    report command expands it itself)."""
    return f"compile-contract report {shlex.quote(path.replace('{rank}', '*'))} -o compile-report/"


def _num(value: str) -> int | str | None:
    """Rank fields as ints where numeric (JSON readers sort them right), else as given, None when unset."""
    value = value.strip()
    if not value:
        return None
    return int(value) if value.lstrip("-").isdigit() else value


def cache_fields(cache: dict[tuple[str, str], int] | None) -> dict[str, Any]:
    """Cache lookups of one compile as log fields: `fx_graph_hit`, `aot_autograd_miss`, ..."""
    return {f"{c}_{r}": n for (c, r), n in cache.items() if n} if cache else {}


def summary_fields(snap: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Per region, one line of counts for the `monitor_stopped` event."""
    return {
        r: f"compiles={s['compiles']} recompiles={s['recompiles']} graph_breaks={s['graph_breaks']}"
        f"{' BREACHED' if s['breached'] else ''}"
        for r, s in snap.items()
    }
