"""Read the monitor's events from event files or any log holding its JSON lines; note everything skipped, never raise.

Defensive by design: fields are used when present and of the right type, extra fields are ignored, an unknown event
name or another format version is skipped with a note, a truncated or foreign line is counted and left out.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from monitor.event_catalog import CATALOG

VERSION = 1
"""The event-file format version this reader understands (`monitor.events.VERSION` when it was written)."""
EVENTS = frozenset(CATALOG)
"""Event names the monitor emits (an engine adapter's through it): `monitor.event_catalog`."""
REGION_EVENTS = frozenset(name for name, spec in CATALOG.items() if spec.region)
"""Events that belong to a region (skipped with a note when their `region` is missing)."""
EXAMPLES = 3
"""Locations kept per note."""
_DECODER = json.JSONDecoder()
_RANKS = tuple(str(r) for r in range(1024))


@dataclass(slots=True)
class Event:
    """One monitor event as read: where it came from, its rank label, wall time (None when unknown) and fields."""

    name: str
    rank: str | None
    ts: float | None
    fields: dict[str, Any]
    source: int
    """Index of the input file it came from."""


@dataclass
class Note:
    """Lines of one kind that were skipped (or read with a caveat): a count and a few `file:line` examples."""

    message: str
    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, where: str) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(where)


@dataclass
class Reading:
    """Everything read from the inputs: events in input order, per-file line counts and the notes."""

    events: list[Event] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    lines: int = 0
    notes: dict[str, Note] = field(default_factory=dict)

    def note(self, key: str, message: str, where: _Where | str) -> None:
        """Count one skipped line under `key` (the message is the first one given for that key)."""
        note = self.notes.get(key)
        if note is None:
            note = self.notes[key] = Note(message)
        note.add(str(where))


class _Where(NamedTuple):
    """`file:line` of an input line, formatted only when a note keeps it (most lines never need it)."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def expand(paths: list[str]) -> list[str]:
    """Inputs as given; a quoted glob (`'events-*.jsonl'`) that names no file is expanded here, sorted."""
    out: list[str] = []
    for path in paths:
        if not os.path.exists(path) and any(c in path for c in "*?["):
            out.extend(sorted(glob.glob(path)) or [path])
        else:
            out.append(path)
    return out


def read(paths: list[str]) -> Reading:
    """Read every input; unreadable files, empty files and foreign or broken lines become notes."""
    reading = Reading()
    for index, path in enumerate(expand(paths)):
        reading.files.append(path)
        _read_file(reading, index, path)
    _label_rankless(reading)
    return reading


def _read_file(reading: Reading, index: int, path: str) -> None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            n = 0
            for n, line in enumerate(fh, 1):
                _read_line(reading, index, line, path, n)
    except OSError as exc:
        reading.note(f"unreadable:{path}", f"cannot read {path}: {exc.strerror or exc}", path)
        return
    reading.lines += n
    if n == 0:
        reading.note(f"empty:{path}", f"{path} is empty: no events", path)


def _read_line(reading: Reading, index: int, line: str, path: str, n: int) -> None:
    """One line: a monitor event (kept), a foreign or broken line, another version or an unknown event (noted)."""
    where = _Where(path, n)
    start = 0 if line.startswith("{") else line.find("{")  # event files: every line starts with its object
    if start < 0:
        if line.strip():
            reading.note("other", "lines of other output (not JSON) were left out", where)
        return
    try:  # the object, whatever follows it on the line (json.loads would refuse a trailing `\r` or text)
        obj = _DECODER.raw_decode(line, start)[0]
    except ValueError:
        if '"event"' in line:
            reading.note("broken", "monitor lines cut off or corrupt (a truncated log?) were skipped", where)
        else:
            reading.note("other", "lines of other output (not JSON) were left out", where)
        return
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        reading.note("foreign", "JSON lines of other programs (no monitor `event`) were left out", where)
        return
    _keep(reading, index, obj, where)


def _keep(reading: Reading, index: int, obj: dict[str, Any], where: _Where) -> None:
    name, version = obj["event"], obj.get("v")
    if version is not None and version != VERSION:
        reading.note(
            f"version:{version!r}",
            f"events of format version {version!r} were skipped (this reader reads version {VERSION}): render them "
            "with the torch-compile-contract release that wrote them",
            where,
        )
        return
    if name not in EVENTS:
        if version is not None or "region" in obj:  # ours, but a name this release does not know
            reading.note(
                f"unknown:{name}", f"unknown monitor event `{name}` skipped (written by a newer release?)", where
            )
        else:
            reading.note("foreign", "JSON lines of other programs (no monitor `event`) were left out", where)
        return
    if name in REGION_EVENTS and not isinstance(obj.get("region"), str):
        reading.note(f"noregion:{name}", f"`{name}` events without a region were skipped", where)
        return
    reading.events.append(Event(name, _rank(obj.get("rank")), _time(obj, reading, where), obj, index))


def _rank(value: Any) -> str | None:
    """Rank label: the number as text (`"0"`), None when the line has none."""
    if type(value) is int:  # the event file's case, first
        return _RANKS[value] if 0 <= value < len(_RANKS) else str(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return str(int(value))
    return None


def _time(obj: dict[str, Any], reading: Reading, where: _Where) -> float | None:
    """Wall time in epoch seconds: `ts` of the event file, else a log line's ISO `timestamp`; None (noted) if neither."""
    ts = obj.get("ts")
    if type(ts) is float:  # the event file's case, first
        return ts
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return float(ts)
    stamp = obj.get("timestamp")
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    reading.note("notime", "events without a wall-clock time are counted but not on the timeline", where)
    return None


def _label_rankless(reading: Reading) -> None:
    """Events without a rank (a log of a run without RANK set): rank 0 when they come from one file and no event
    names rank 0, else the file's name, so two such files never merge into one rank."""
    rankless = {e.source for e in reading.events if e.rank is None}
    if not rankless:
        return
    taken = {e.rank for e in reading.events if e.rank is not None}
    by_file = len(rankless) > 1 or "0" in taken
    for e in reading.events:
        if e.rank is None:
            e.rank = os.path.basename(reading.files[e.source]) if by_file else "0"
