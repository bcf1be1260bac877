"""One catalog of events (`monitor/event_catalog.py`): what the code emits, what the chokepoint checks, what the
report reads and what the docs show are the same list."""

from __future__ import annotations

import json
import re

import torch

from monitor.event_catalog import CATALOG, known
from monitor.report.read import EVENTS, REGION_EVENTS
from tests import ROOT
from tests.monitor.models import Counting

CALL = re.compile(r"\b(?:_say|say|emit)\(\s*(?:\"(debug|info|warning|error)\"|[a-z_.]+),\s*\"([a-z_]+)\"")
"""An emission with a literal event name: `self._say("info", "compile", ...)`, `say(level, "cold_compile", ...)`."""


def emitted_in_source() -> set[tuple[str | None, str]]:
    """(literal level or None, event name) of every emission in monitor/ and contract/."""
    found = set()
    for pkg in ("monitor", "contract"):
        for path in (ROOT / pkg).rglob("*.py"):
            found |= {(m.group(1), m.group(2)) for m in CALL.finditer(path.read_text(encoding="utf-8"))}
    return found


def test_every_event_the_code_emits_is_in_the_catalog_at_its_level() -> None:
    """Each literal emission names a catalogued event, at a level the catalog allows for it."""
    found = emitted_in_source()
    assert len(found) >= 15, found  # the pattern still matches the code's emissions
    assert {name for _, name in found} - set(CATALOG) == set()
    assert [(lv, n) for lv, n in found if lv is not None and not known(n, lv)] == []


def test_the_report_reads_exactly_the_catalog() -> None:
    """`compile-contract report` knows every catalogued event, and the region ones are the catalog's."""
    assert EVENTS == set(CATALOG)
    assert REGION_EVENTS == {n for n, s in CATALOG.items() if s.region} and "compile" in REGION_EVENTS


def test_an_event_missing_from_the_catalog_is_still_written_and_counted_as_a_monitor_error(started, tmp_path) -> None:
    """The chokepoint never drops or raises: the line reaches the event file and `monitor_error` kind `event` says
    which name is missing."""
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\n[monitor]\nevents_path = "ev/e.jsonl"\n', model)
    model(torch.randn(2, 8))
    mon.emit("info", "training_paused", step=3)
    mon.emit("error", "training_stopped", engine="lightning", step=3, regions=[], effect="stops")
    mon.stop()
    got = [json.loads(line) for line in (tmp_path / "ev" / "e.jsonl").read_text().splitlines()]
    names = [e["event"] for e in got]
    assert "training_paused" in names and "training_stopped" in names
    errors = [e for e in got if e["event"] == "monitor_error"]
    assert len(errors) == 1 and errors[0]["kind"] == "event" and "training_paused" in errors[0]["error"]
    assert mon.ledger.errors["event"] == 1


def test_a_run_with_recompiles_and_a_breach_emits_only_catalogued_events(started, events) -> None:
    """Compiles, recompiles, a budget breach and the stop: every event is in the catalog at its level."""
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\nrecompile_budget = 1\n', model)
    for _ in range(4):
        model(torch.randn(2, 8))
    mon.mark_warm()
    mon.stop()
    got = [(e["level"], e["event"]) for e in events.events]
    assert {"compile", "recompile", "budget_exceeded", "monitor_warm", "monitor_stopped"} <= {n for _, n in got}
    assert [(lv, n) for lv, n in got if not known(n, lv)] == [] and mon.ledger.errors["event"] == 0
