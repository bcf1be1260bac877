"""Unfinished compiles: a `compile_started` that no end closed, because the process hung, was killed or stopped
mid-compile. The report shows them first: on several ranks, the rank still compiling while its peers had finished is
the one their collective waited for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor.report.read import Event

MAX_SHOWN = 50
"""Unfinished compiles listed on the page and in the CLI notes (the trace holds every one)."""


@dataclass(slots=True)
class Unfinished:
    """One compile that started and never ended (in the inputs)."""

    rank: str
    pid: Any
    region: str
    module: str
    compile_id: str
    trigger: str
    start: float | None
    code: str
    """`function (file:line)` of the frame Dynamo was compiling, "" when the event has none."""
    budget: Any
    interrupted: str = ""
    """What stopped the process mid-compile (`SIGTERM`, `stop`, `SystemExit`...), from `compile_interrupted`."""
    seconds: float | None = None
    """How long it had run when `compile_interrupted` was written."""
    phase: str = ""
    """The innermost torch compiler frame at that moment (`compile_interrupted`, or a budget breach mid-compile)."""
    waiting_on: str = ""
    """A cache lock file the compile was waiting for."""

    def where(self) -> str:
        """The compile in words: region, module, compile id, code."""
        module = f" ({self.module})" if self.module and self.module != self.region else ""
        code = f", compiling {self.code}" if self.code else ""
        return f"region {self.region}{module}, compile {self.compile_id or '?'} ({self.trigger or '?'}){code}"


class Tracker:
    """Pairs each `compile_started` with its end, per rank and process: a `compile` or `aux_compile` of the same id,
    `compile_finished`, a later `compile_started` (Dynamo runs one compile at a time per process), or
    `monitor_stopped` (which names, through `compile_interrupted`, a compile still running at that point)."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, Any], dict[str, Unfinished]] = {}

    def started(self, e: Event, rank: str) -> None:
        f = e.fields
        code = ""
        if isinstance(f.get("code"), str):
            code = f"{f['code']} ({_s(f.get('file'))}:{f.get('line', '?')})"
        item = Unfinished(
            rank, f.get("pid"), f["region"], _s(f.get("module")), _s(f.get("compile_id")), _s(f.get("trigger")),
            e.ts, code, f.get("budget"),
        )  # fmt: skip
        self._open[(rank, f.get("pid"))] = {item.compile_id: item}

    def ended(self, e: Event, rank: str) -> None:
        """A `compile`, `aux_compile` or `compile_finished` event: its compile id is no longer open."""
        opened = self._open.get((rank, e.fields.get("pid")))
        if opened:
            opened.pop(_s(e.fields.get("compile_id")), None)

    def interrupted(self, e: Event, rank: str) -> None:
        """`compile_interrupted`: the compile stays open (the process went down in it); note why and where."""
        f = e.fields
        item = self._open.get((rank, f.get("pid")), {}).get(_s(f.get("compile_id")))
        if item is not None:
            item.interrupted = _s(f.get("by")) or "?"
            item.seconds = _num(f.get("seconds"))
            item.phase = _s(f.get("phase")) or item.phase
            item.waiting_on = _s(f.get("waiting_on")) or item.waiting_on

    def breached(self, e: Event, rank: str) -> None:
        """A budget breach fired mid-compile (`in_progress`): keep where the compile was at that moment."""
        f = e.fields
        item = self._open.get((rank, f.get("pid")), {}).get(_s(f.get("compile_id")))
        if item is not None and f.get("in_progress") is True:
            item.phase = _s(f.get("phase")) or item.phase
            item.waiting_on = _s(f.get("waiting_on")) or item.waiting_on

    def stopped(self, e: Event, rank: str) -> None:
        """`monitor_stopped`: compiles it did not name as interrupted had ended (their end event was lost)."""
        opened = self._open.get((rank, e.fields.get("pid")))
        if opened:
            for cid in [cid for cid, item in opened.items() if not item.interrupted]:
                del opened[cid]

    def result(self) -> list[Unfinished]:
        """Every compile still open after the last event, oldest first."""
        items = [item for opened in self._open.values() for item in opened.values()]
        return sorted(items, key=lambda u: (u.start is None, u.start or 0.0))


def peers_done(ranks: list[str], unfinished: list[Unfinished]) -> tuple[list[str], list[str]]:
    """(ranks with an unfinished compile, ranks without one) in rank order."""
    compiling = {u.rank for u in unfinished}
    return [r for r in ranks if r in compiling], [r for r in ranks if r not in compiling]


def headline(ranks: list[str], unfinished: list[Unfinished]) -> str:
    """One sentence naming the rank(s) still compiling and whether their peers had finished."""
    if not unfinished:
        return ""
    compiling, idle = peers_done(ranks, unfinished)
    who = ", ".join(compiling)
    if len(ranks) == 1:
        return f"rank {who} was still compiling where its events end (it hung, was killed or stopped in the compile)"
    if not idle:
        return f"rank(s) {who} never finished a compile (every rank of the inputs was compiling)"
    return (
        f"rank(s) {who} were still compiling while rank(s) {', '.join(idle)} had finished compiling: a collective "
        "the finished ranks entered waited for this compile"
    )


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
