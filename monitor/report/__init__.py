"""Post-mortem report of monitored runs: `compile-contract report LOGS... -o DIR` writes `report.html` (one
self-contained page), `timeline.png` (needs the `report` extra: matplotlib) and `trace.json` (Chrome trace events).

Modules: `read` (event files and logs -> events + notes), `model` (aggregation), `html`, `timeline`, `trace`;
`drawer` draws the timeline in a forked child for the CLI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from monitor.report import html, timeline, trace
from monitor.report.drawer import Drawer
from monitor.report.model import Run, build
from monitor.report.read import read
from monitor.report.stalls import MAX_SHOWN, headline

__all__ = ["ReportError", "Written", "write_report", "load"]
PNG_EXTRA = "timeline.png needs matplotlib: pip install torch-compile-contract[report]"


class ReportError(Exception):
    """The output cannot be written (a usage error; unreadable inputs are notes, not errors)."""


@dataclass(frozen=True)
class Written:
    """What `write_report` produced and what it skipped."""

    run: Run
    html: str
    trace: str
    png: str | None
    png_note: str | None
    notes: list[str] = field(default_factory=list)
    """One line per kind of skipped input and per caveat, for the CLI."""


def load(paths: list[str]) -> Run:
    """Read and aggregate the inputs (never raises on their content)."""
    return build(read(paths))


def write_report(paths: list[str], out_dir: str, *, parallel: bool = False) -> Written:
    """Read the inputs and write the page, the timeline (when matplotlib is installed) and the trace into `out_dir`.

    `parallel=True` (the CLI) draws the timeline in a forked child on the second core; only for a process that has
    not imported torch or started threads.
    """
    drawer = Drawer() if parallel else None
    try:
        run = load(paths)
        try:
            os.makedirs(out_dir, exist_ok=True)
            plan = timeline.plan(run)
            if drawer is not None:
                drawer.submit(plan)
            spans = _write(out_dir, "trace.json", trace.render(run).encode("utf-8"))  # while the child draws
            drawn, png_note = _timeline(plan, drawer)
            page = _write(out_dir, "report.html", html.render(run, drawn, png_note).encode("utf-8"))
            png = _write(out_dir, "timeline.png", drawn.png) if drawn is not None else _drop(out_dir, "timeline.png")
        except OSError as exc:
            raise ReportError(f"cannot write the report into {out_dir}: {exc.strerror or exc}") from None
    finally:
        if drawer is not None:
            drawer.close()
    return Written(run, page, spans, png, png_note, _note_lines(run))


def _timeline(plan: timeline.Plan, drawer: Drawer | None) -> tuple[timeline.Timeline | None, str | None]:
    """The picture, or None and the note saying the `report` extra is missing."""
    try:
        return (drawer.result(plan) if drawer is not None else timeline.draw(plan)), None
    except ImportError:
        return None, PNG_EXTRA


def _write(out_dir: str, name: str, data: bytes) -> str:
    """Atomic write (a reader never sees half a page)."""
    path = os.path.join(out_dir, name)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path


def _drop(out_dir: str, name: str) -> str | None:
    """Remove a stale output of an earlier report (it would not match this one); None: nothing written."""
    path = os.path.join(out_dir, name)
    if os.path.exists(path):
        os.remove(path)
    return None


def _note_lines(run: Run) -> list[str]:
    lines = [s.line() for s in run.stops[:MAX_SHOWN]]
    lines += [f"unfinished compile: rank {u.rank}: {u.where()}" for u in run.unfinished[:MAX_SHOWN]]
    if run.unfinished:
        lines.append(headline(run.rank_order, run.unfinished))
    lines += run.notes
    for note in run.reading.notes.values():
        where = ", ".join(note.examples) + (", ..." if note.count > len(note.examples) else "")
        lines.append(f"{note.message}: {note.count} line(s) ({where})")
    return lines
