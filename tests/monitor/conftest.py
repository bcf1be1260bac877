"""Fixtures: apply a contract to a fresh model (check + apply, no refusal) and start a monitor on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

import monitor
from contract.binding.apply import apply
from contract.binding.targets import Binding
from contract.pipeline import check

HEADER = '[contract]\nname = "test-net"\n[defaults]\nbackend = "eager"\n'


class Events:
    """A structlog-style logger that keeps every event (so tests assert on the log lines the monitor emits)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def _log(self, level: str) -> Callable[..., None]:
        def log(event: str, **kw: Any) -> None:
            self.events.append({"event": event, "level": level, **kw})

        return log

    def __getattr__(self, level: str) -> Callable[..., None]:
        if level in ("debug", "info", "warning", "error", "critical"):
            return self._log(level)
        raise AttributeError(level)

    def named(self, event: str) -> list[dict[str, Any]]:
        """Events with that name."""
        return [e for e in self.events if e["event"] == event]


def bind_applied(path: Path, model: Any) -> Binding:
    """check() then apply(): the binding the engine would run with (findings not enforced)."""
    contract, binding, findings = check(path, model)
    assert binding is not None, findings
    return apply(binding)


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def started(write_contract, events) -> Iterator[Callable[..., tuple[Binding, monitor.Monitor]]]:
    """Build: write the contract (header + body), bind and apply it to the model, start a monitor on it."""
    mons: list[monitor.Monitor] = []

    def make(body: str, model: Any, **kw: Any) -> tuple[Binding, monitor.Monitor]:
        binding = bind_applied(write_contract(HEADER + body), model)
        kw.setdefault("registry", CollectorRegistry())
        kw.setdefault("serve", False)
        mon = monitor.start(binding, logger=events, **kw)
        mons.append(mon)
        return binding, mon

    yield make
    for mon in mons:
        mon.stop()
