"""A short observed run: what the probe (`checks/probe/run.py`) and `init`'s recording (`init/record.py`) share.

Both bind the contract observed only (`relaxed`: breaches alert, nothing is exported), start the monitor on a
`Recorder` (its logger: every event kept with the step it happened in) and read the recorder's events and the
monitor's snapshot afterwards. `compile-contract warm` runs the real contract with its own logger, so it uses neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contract.document.load import Contract
from contract.document.schema import MonitorSpec

if TYPE_CHECKING:
    from contract.binding.targets import Binding
    from monitor.runtime import Monitor

LEVELS = ("debug", "info", "warning", "error", "critical")
UNLIMITED = 1 << 30
"""Budgets of an `unlimited` run: nothing breaches, so no `on_breach` action changes what the step does."""


@dataclass(frozen=True, kw_only=True)
class Event:
    """One event the monitor emitted during the run."""

    name: str
    """`compile`, `recompile`, `graph_break`, `recompile_limit_hit`, ... (`monitor/event_catalog.py`)."""
    step: int
    """Index of the step it happened in."""
    fields: dict[str, Any]
    """The event's fields, as the monitor logs them."""
    level: str = "info"
    """The level it was logged at."""


class Recorder:
    """The monitor's logger during an observed run: keeps every event, tagged with the current step (`step`, set by
    the caller before each call); `on_event` sees each one as it happens."""

    def __init__(self, on_event: Callable[[Event], None] | None = None) -> None:
        self.step = 0
        self.events: list[Event] = []
        self._on_event = on_event

    def named(self, name: str) -> list[Event]:
        """The events of one kind, in order."""
        return [e for e in self.events if e.name == name]

    def __getattr__(self, level: str) -> Callable[..., None]:
        if level not in LEVELS:
            raise AttributeError(level)

        def log(event: str, **fields: Any) -> None:
            kept = Event(name=event, step=self.step, fields=fields, level=level)
            self.events.append(kept)
            if self._on_event is not None:
                self._on_event(kept)

        return log


def relaxed(contract: Contract, *, backend: str | None = None, unlimited: bool = False) -> Contract:
    """The contract observed only: every enabled region alerts on a breach and `[monitor]` exports nothing (no port,
    snapshot file or push, whatever it says). `backend`: compiled with that backend instead (Inductor's mode and
    options dropped; engine regions compiled like the others); `unlimited`: budgets nothing can exceed."""
    change: dict[str, Any] = {"on_breach": "alert"}
    if backend is not None:
        change |= {"backend": backend, "mode": None, "options": {}, "compiled_by": "contract"}
    if unlimited:
        change |= {"recompile_budget": UNLIMITED, "graph_break_budget": UNLIMITED}
    regions = tuple(dataclasses.replace(r, **change) if r.enabled else r for r in contract.regions)
    return dataclasses.replace(contract, regions=regions, monitor=MonitorSpec())


def observer(binding: Binding, recorder: Recorder) -> Monitor:
    """The monitor of an observed run: the recorder as its logger, a private registry, no port, no environment."""
    from prometheus_client import CollectorRegistry

    from monitor.runtime import Monitor  # late: importing structlog draws from Python's `random` (probe snapshots it)

    return Monitor(binding, registry=CollectorRegistry(), logger=recorder, serve=False, environ={})
