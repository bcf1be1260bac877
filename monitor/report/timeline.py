"""`timeline.png`: one row per region (and rank), compile spans over wall time coloured by kind, breaches marked.

matplotlib is an optional extra (`pip install torch-compile-contract[report]`); it is imported only here.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from monitor.report.model import KINDS, Run, rank_key

MAX_ROWS = 60
"""Rows drawn at most; beyond that the rows with breaches, limit hits and the most compile time are kept (the trace
holds every row)."""
COLORS = {
    "first": "#4c78a8",
    "cold": "#f58518",
    "recompile": "#e45756",
    "backward": "#54a24b",
    "cudagraph": "#b279a2",
    "unfinished": "#7f0000",
}
LABELS = {
    "first": "first compile",
    "cold": "cold compile (cache miss)",
    "recompile": "recompile",
    "backward": "backward",
    "cudagraph": "CUDA-graph recording",
    "unfinished": "unfinished compile (never ended)",
}
MARKS = {"breach": ("X", "#000000", "budget breach"), "limit_hit": ("v", "#7f0000", "recompile limit hit")}
LABEL_CHARS = 48
WIDTH_IN, LEFT_IN = 12.0, 3.0
"""Figure width and the room left of the axes for row labels of LABEL_CHARS characters at 8 pt."""


@dataclass(frozen=True)
class Timeline:
    """The PNG and what it shows (the page's caption says when rows were left out)."""

    png: bytes
    rows: int
    total_rows: int
    width: int
    height: int


def rows(run: Run) -> tuple[list[tuple[str, str]], int]:
    """(region, rank) rows in contract then rank order, capped at MAX_ROWS by importance; and how many there were."""
    score: dict[tuple[str, str], list[float]] = {}
    for span in run.spans:
        row = score.setdefault((span.region, span.rank), [0.0, 0.0])
        row[1] += span.end - span.start
        row[0] += span.kind == "unfinished"  # a compile that never ended is kept first, like a breach
    for mark in run.marks:
        if mark.kind in MARKS:
            score.setdefault((mark.region, mark.rank), [0.0, 0.0])[0] += 1
    order = {name: i for i, name in enumerate(run.regions)}
    keys = sorted(score, key=lambda k: (order.get(k[0], len(order)), rank_key(k[1])))
    if len(keys) <= MAX_ROWS:
        return keys, len(keys)
    kept = set(sorted(keys, key=lambda k: score[k], reverse=True)[:MAX_ROWS])
    return [k for k in keys if k in kept], len(keys)


@dataclass(frozen=True)
class Plan:
    """What the figure shows, as plain data (small: only the drawn rows), so it can be drawn in another process."""

    labels: list[str]
    boxes: dict[str, list[tuple[float, float, int]]]
    """Kind -> (start, end, row) of each span, seconds since the first event."""
    points: dict[str, list[tuple[float, int]]]
    """Mark kind -> (time, row)."""
    total_rows: int


def plan(run: Run) -> Plan:
    """Pick the rows and place every span and mark of them on the time axis."""
    keys, total = rows(run)
    row = {k: i for i, k in enumerate(keys)}
    t0 = run.t0 or 0.0
    boxes: dict[str, list[tuple[float, float, int]]] = {k: [] for k in KINDS}
    for s in run.spans:
        y = row.get((s.region, s.rank))
        if y is not None:
            boxes[s.kind].append((s.start - t0, s.end - t0, y))
    points: dict[str, list[tuple[float, int]]] = {k: [] for k in MARKS}
    for m in run.marks:
        y = row.get((m.region, m.rank))
        if y is not None and m.kind in points:
            points[m.kind].append((m.ts - t0, y))
    multi = len(run.ranks) > 1
    return Plan([_label(k, multi) for k in keys], boxes, points, total)


def render(run: Run) -> Timeline:
    """Plan and draw in this process."""
    return draw(plan(run))


def draw(p: Plan) -> Timeline:
    """Draw the figure (Agg, no pyplot state) and return it as PNG bytes; ImportError without matplotlib."""
    from matplotlib.figure import Figure

    height = 1.2 + 0.24 * max(len(p.labels), 3)
    fig = Figure(figsize=(WIDTH_IN, height), dpi=100)  # fixed margins: a layout engine would draw every label twice
    ax = fig.add_subplot()
    fig.subplots_adjust(left=LEFT_IN / WIDTH_IN, right=0.98, top=1 - 0.5 / height, bottom=0.55 / height)
    if p.labels:
        _draw(fig, ax, p)
    else:
        ax.text(0.5, 0.5, "no compile spans in the inputs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    width, height_px = (int(v) for v in fig.canvas.get_width_height())
    return Timeline(buf.getvalue(), len(p.labels), p.total_rows, width, height_px)


def _draw(fig: Any, ax: Any, p: Plan) -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = []
    ends = [x1 for spans in p.boxes.values() for _, x1, _ in spans] + [x for pts in p.points.values() for x, _ in pts]
    end = max(ends, default=0.0)
    end = max(end, 1e-3) * (1.15 if p.boxes["unfinished"] else 1.0)  # room to show an open compile's end is not known
    for kind, spans in p.boxes.items():
        if spans:  # an edge as wide as the face keeps a 5 ms compile visible on an hour-long axis
            if kind == "unfinished":  # open to the right edge: hatched, so it reads apart from a long compile
                spans = [(x0, end * 1.03, y) for x0, _, y in spans]
            verts = [[(x0, y - 0.38), (x0, y + 0.38), (x1, y + 0.38), (x1, y - 0.38)] for x0, x1, y in spans]
            hatch = "//" if kind == "unfinished" else None
            face = "none" if hatch else COLORS[kind]
            ax.add_collection(
                PolyCollection(verts, facecolors=face, edgecolors=COLORS[kind], linewidths=1, hatch=hatch)
            )
            handles.append(Patch(facecolor=face, edgecolor=COLORS[kind], hatch=hatch, label=LABELS[kind]))
    for kind, pts in p.points.items():
        if pts:
            marker, color, label = MARKS[kind]
            ax.scatter([x for x, _ in pts], [y for _, y in pts], marker=marker, s=70, c=color, zorder=3)
            handles.append(Line2D([], [], marker=marker, color=color, linestyle="", label=label))
    ax.set_xlim(0, end * 1.03)
    ax.set_ylim(len(p.labels) - 0.5, -0.5)
    ax.set_yticks(range(len(p.labels)), p.labels, fontsize=8)
    ax.set_xlabel("wall time since the first event (s)")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(handles=handles, loc="upper center", ncols=max(len(handles), 1), frameon=False, fontsize=8)


def _label(key: tuple[str, str], multi: bool) -> str:
    region, rank = key
    text = f"{region} · rank {rank}" if multi else region
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
