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
}
LABELS = {
    "first": "first compile",
    "cold": "cold compile (cache miss)",
    "recompile": "recompile",
    "backward": "backward",
    "cudagraph": "CUDA-graph recording",
}
MARKS = {"breach": ("X", "#000000", "budget breach"), "limit_hit": ("v", "#7f0000", "recompile limit hit")}
LABEL_CHARS = 48


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
        score.setdefault((span.region, span.rank), [0.0, 0.0])[1] += span.end - span.start
    for mark in run.marks:
        if mark.kind in MARKS:
            score.setdefault((mark.region, mark.rank), [0.0, 0.0])[0] += 1
    order = {name: i for i, name in enumerate(run.regions)}
    keys = sorted(score, key=lambda k: (order.get(k[0], len(order)), rank_key(k[1])))
    if len(keys) <= MAX_ROWS:
        return keys, len(keys)
    kept = set(sorted(keys, key=lambda k: score[k], reverse=True)[:MAX_ROWS])
    return [k for k in keys if k in kept], len(keys)


def render(run: Run) -> Timeline:
    """Draw the figure (Agg, no pyplot state) and return it as PNG bytes."""
    from matplotlib.figure import Figure

    keys, total = rows(run)
    fig = Figure(figsize=(12, 1.4 + 0.24 * max(len(keys), 3)), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    t0 = run.t0 or 0.0
    if keys:
        _draw(fig, ax, run, keys, t0, multi=len(run.ranks) > 1)
    else:
        ax.text(0.5, 0.5, "no compile spans in the inputs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    width, height = (int(v) for v in fig.canvas.get_width_height())
    return Timeline(buf.getvalue(), len(keys), total, width, height)


def _draw(fig: Any, ax: Any, run: Run, keys: list[tuple[str, str]], t0: float, *, multi: bool) -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    row = {k: i for i, k in enumerate(keys)}
    boxes: dict[str, list[list[tuple[float, float]]]] = {k: [] for k in KINDS}
    end = 0.0
    for s in run.spans:
        y = row.get((s.region, s.rank))
        if y is not None:
            x0, x1 = s.start - t0, s.end - t0
            boxes[s.kind].append([(x0, y - 0.38), (x0, y + 0.38), (x1, y + 0.38), (x1, y - 0.38)])
            end = max(end, x1)
    handles: list[Any] = []
    for kind, verts in boxes.items():
        if verts:  # an edge as wide as the face keeps a 5 ms compile visible on an hour-long axis
            ax.add_collection(PolyCollection(verts, facecolors=COLORS[kind], edgecolors=COLORS[kind], linewidths=1))
            handles.append(Patch(color=COLORS[kind], label=LABELS[kind]))
    for kind, (marker, color, label) in MARKS.items():
        pts = [(m.ts - t0, row[(m.region, m.rank)]) for m in run.marks if m.kind == kind and (m.region, m.rank) in row]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, s=70, c=color, zorder=3)
            end = max(end, *(p[0] for p in pts))
            handles.append(Line2D([], [], marker=marker, color=color, linestyle="", label=label))
    ax.set_xlim(0, max(end, 1e-3) * 1.03)
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.set_yticks(range(len(keys)), [_label(k, multi) for k in keys], fontsize=8)
    ax.set_xlabel("wall time since the first event (s)")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(handles=handles, loc="outside upper center", ncols=max(len(handles), 1), frameon=False, fontsize=8)


def _label(key: tuple[str, str], multi: bool) -> str:
    region, rank = key
    text = f"{region} · rank {rank}" if multi else region
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
