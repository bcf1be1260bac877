"""`report.html`: one self-contained page (inline CSS, the timeline embedded as a data URI, no script, no network)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from html import escape
from typing import Any

from monitor.report.model import Cell, RegionView, Run, rank_key
from monitor.report.read import Note
from monitor.report.stalls import MAX_SHOWN, headline
from monitor.report.timeline import LABELS, Timeline

MAX_ROWS = 20
"""Reason and site rows shown per region (the rest are counted in a last row)."""
MAX_BREACHES = 50
"""Breaches listed in the run-wide, time-ordered table."""
OPEN_DETAILS = 50
"""Region sections shown open when they had trouble (a breach, a limit hit, divergence), at most this many."""
CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1d1d1f;max-width:1500px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:14px 0 6px}.sub{color:#555}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #d6d6d6;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fdecea}tr.merged td{font-weight:600;background:#f7f7fb}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}
.notes{background:#fff8e1;border:1px solid #f0d68a;padding:8px 14px}.ok{color:#2e7d32}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:#e45756;color:#fff;font-size:12px}
details{border:1px solid #e3e3e3;border-radius:4px;margin:6px 0;padding:4px 10px}
summary{cursor:pointer;font-weight:600}img#timeline{max-width:100%;border:1px solid #ddd}
"""


def render(run: Run, timeline: Timeline | None, timeline_note: str | None) -> str:
    """The whole page."""
    parts = [
        _head(run),
        _unfinished(run),
        _stops(run),
        _notes(run),
        _identity(run),
        _overview(run),
        _first_breaches(run),
        _starts(run),
        _divergence(run),
        _timeline(timeline, timeline_note),
        _regions(run),
        "</body></html>\n",
    ]
    return "".join(parts)


def _head(run: Run) -> str:
    names = sorted({n for n, _, _ in run.contracts if n}) or ["(no contract identity in the inputs)"]
    span = f"{_clock(run.t0)} – {_clock(run.t1)} UTC" if run.t0 is not None else "no wall-clock times"
    sub = (
        f"{len(run.ranks)} rank(s) · {len(run.regions)} region(s) · {len(run.reading.events):,} events from "
        f"{len(run.reading.files)} file(s) · {span}"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Compile report: {escape(', '.join(names))}</title><style>{CSS}</style></head><body>"
        f"<h1>Compile report: {escape(', '.join(names))}</h1><div class=sub>{escape(sub)} · generated "
        f"{escape(datetime.now(UTC).strftime('%Y-%m-%d %H:%M:%S UTC'))} by <code>compile-contract report</code></div>"
    )


def _unfinished(run: Run) -> str:
    """First thing on the page: compiles that started and never ended, and the rank(s) the others waited for."""
    if not run.unfinished:
        return ""
    rows = [
        _tr(
            u.rank,
            u.region,
            u.module or "–",
            u.compile_id or "?",
            u.trigger or "?",
            _rel(run, u.start),
            f"≥ {(run.t1 or 0.0) - u.start:.1f} s" if u.start is not None and run.t1 is not None else "?",
            f"{u.interrupted} after {u.seconds:.1f} s"
            if u.interrupted and u.seconds is not None
            else u.interrupted or "–",
            _code(u.code),
            _code(u.phase),
            _code(u.waiting_on),
            u.budget if u.budget is not None else "–",
            cls="bad",
            raw=(8, 9, 10),
        )  # fmt: skip
        for u in run.unfinished[:MAX_SHOWN]
    ]
    more = (
        f"<p class=sub>… and {len(run.unfinished) - MAX_SHOWN} more (trace.json).</p>"
        if len(run.unfinished) > MAX_SHOWN
        else ""
    )
    head = _th(
        "Rank", "Region", "Module", "Compile id", "Trigger", "Started", "Open for", "Interrupted", "Compiling",
        "Where it was", "Waiting for", "Budget (s)",
    )  # fmt: skip
    return (
        '<section id="unfinished" class="notes"><h2 style="border:0;margin-top:4px">Unfinished compiles</h2>'
        f"<p><b>{escape(headline(run.rank_order, run.unfinished))}</b>. A compile that started and never ended: the "
        "process hung in it, or was killed or stopped while it ran (open for: until the inputs' last event).</p>"
        f"<table>{head}{''.join(rows)}</table>{more}</section>"
    )


def _stops(run: Run) -> str:
    """Near the top: where an engine adapter stopped the run on a `fail` breach (the why of a run that ended early)."""
    if not run.stops:
        return ""
    rows = [
        _tr(
            _rel(run, s.ts),
            s.rank,
            s.engine,
            f"step {s.step}",
            s.event,
            ", ".join(s.regions) or "– (another rank breached)",
            s.effect,
            cls="bad",
        )
        for s in run.stops[:MAX_BREACHES]
    ]
    head = _th("When", "Rank", "Engine", "At", "Event", "Breached fail regions", "Effect")
    return (
        '<section id="stopped" class="notes"><h2 style="border:0;margin-top:4px">Why the run stopped</h2>'
        "<p>An engine adapter acted on a <code>fail</code> breach at its step boundary (see Budget breaches for the "
        f"budget that broke).</p><table>{head}{''.join(rows)}</table></section>"
    )


def _notes(run: Run) -> str:
    notes: list[Note] = list(run.reading.notes.values())
    items = [f"<li>{escape(n)}</li>" for n in run.notes]
    for note in notes:
        where = ", ".join(note.examples) + (" …" if note.count > len(note.examples) else "")
        items.append(
            f"<li>{escape(note.message)}: <b>{note.count:,}</b> line(s) (<span class=mono>{escape(where)}</span>)</li>"
        )
    if not items:
        return f'<section id="notes"><p class=ok>Every line of the {run.reading.lines:,} input lines was read.</p></section>'
    return (
        '<section id="notes" class="notes"><h2 style="border:0;margin-top:4px">What was skipped or needs care</h2>'
        f"<ul>{''.join(items)}</ul></section>"
    )


def _identity(run: Run) -> str:
    rows = "".join(
        f"<tr><td>{escape(n or '?')}</td><td class=mono>{escape(sha or '?')}</td><td class=mono>{escape(p or '?')}</td></tr>"
        for n, sha, p in run.contracts
    )
    contract = (
        f"<table><tr><th>Contract</th><th>sha256</th><th>Path</th></tr>{rows}</table>"
        if rows
        else "<p>No <code>monitor_started</code> event: the contract's identity is unknown.</p>"
    )
    env_rows = []
    for rank in run.rank_order:
        info = run.ranks[rank]
        ident = info.identity
        errors = ", ".join(f"{k}: {v}" for k, v in sorted(info.errors.items())) or "0"
        env_rows.append(
            _tr(
                rank,
                ident.get("hostname", "?"),
                ident.get("pid", "?"),
                ident.get("world_size", "?"),
                ident.get("torch", "?"),
                ident.get("python", "?"),
                ident.get("platform", "?"),
                _rel(run, info.first_ts),
                _rel(run, info.warm_ts),
                _rel(run, info.last_ts),
                f"{info.events:,}",
                info.resets,
                errors,
                cls="bad" if info.errors else "",
            )
        )
    head = _th(
        "Rank", "Host", "PID", "World", "torch", "Python", "Platform", "First event", "Warm", "Last event", "Events",
        "Dynamo resets", "Monitor errors",
    )  # fmt: skip
    return f'<section id="identity"><h2>Contract and environment</h2>{contract}<table>{head}{"".join(env_rows)}</table></section>'


CELL_HEAD = (
    "Compiles", "First", "Recompiles", "Graph breaks", "FX cache hit/miss", "AOT cache hit/miss", "Backward",
    "Compile s", "Recompiles counted / budget", "Break sites / budget", "Limit hits", "Breaches (action)",
)  # fmt: skip


def _cells(cell: Cell, settings: dict[str, Any]) -> list[Any]:
    c = cell.cache
    breaches = "; ".join(f"{b.kind} {b.count}/{b.budget} → {b.action}" for b in cell.breaches) or "–"
    return [
        cell.compiles,
        cell.first,
        cell.recompiles,
        cell.graph_breaks,
        f"{c['fx_graph_hit']} / {c['fx_graph_miss']}",
        f"{c['aot_autograd_hit']} / {c['aot_autograd_miss']}",
        cell.backward + cell.cudagraph,
        f"{cell.seconds:.2f}",
        f"{cell.budget_recompiles} / {settings.get('recompile_budget', '?')}",
        f"{cell.break_sites} / {settings.get('graph_break_budget', '?')}",
        cell.limit_hits,
        breaches,
    ]


def _overview(run: Run) -> str:
    rows = []
    for i, view in enumerate(run.regions.values()):
        s = view.settings
        link = f'<a href="#region-{i}">{escape(view.name)}</a>'
        setting = f"{s.get('backend', '?')}, {s.get('state', '?')}, on_breach={s.get('on_breach', '?')}"
        bad = "bad" if view.breached or view.merged.limit_hits else ""
        rows.append(_tr(link, setting, len(view.cells), *_cells(view.merged, s), cls=bad, raw_first=True))
    if not rows:
        return '<section id="overview"><h2>Regions</h2><p>No region events in the inputs.</p></section>'
    head = _th("Region", "Settings", "Ranks", *CELL_HEAD)
    return (
        '<section id="overview"><h2>Regions (all ranks merged)</h2>'
        "<p class=sub>Counts are summed over ranks; budget use is the worst rank's (what the metric shows).</p>"
        f"<table>{head}{''.join(rows)}</table></section>"
    )


def _first_breaches(run: Run) -> str:
    """Every budget breach in time order: which budget broke first, where, on which rank, and what was done."""
    found = [(b, name) for name, view in run.regions.items() for b in view.merged.breaches]
    if not found:
        return '<section id="breaches"><h2>Budget breaches</h2><p class=ok>No budget was exceeded.</p></section>'
    found.sort(key=lambda item: (item[0].ts is None, item[0].ts or 0.0))
    rows = [
        _tr(_rel(run, b.ts), name, b.rank, b.kind, f"{b.count} > {b.budget}", b.action, cls="bad")
        for b, name in found[:MAX_BREACHES]
    ]
    more = (
        f"<p class=sub>… and {len(found) - MAX_BREACHES} more (see each region).</p>"
        if len(found) > MAX_BREACHES
        else ""
    )
    head = _th("When", "Region", "Rank", "Budget", "Use", "Action taken")
    return f'<section id="breaches"><h2>Budget breaches, first first</h2><table>{head}{"".join(rows)}</table>{more}</section>'


SOURCES = ("precompile", "artifacts", "cold")
"""`first_compile` sources, in the order shown."""


def _starts(run: Run) -> str:
    """Per region and source: how many instances' first compile came from it, and their seconds (all ranks)."""
    rows = []
    for name, view in run.regions.items():
        cell = view.merged
        known = [s for s in SOURCES if cell.starts[s]] + sorted(s for s in cell.starts if s not in SOURCES)
        for source in known:
            why = "; ".join(f"{n}× {r}" for r, n in cell.unloaded.most_common(3)) if source != "precompile" else ""
            rows.append(
                _tr(name, source, cell.starts[source], f"{cell.start_seconds[source]:.2f}", why, cls="bad" * bool(why))
            )
    if not rows:
        return '<section id="starts"><h2>First compiles</h2><p>No <code>first_compile</code> events in the inputs.</p></section>'
    head = _th("Region", "First compile from", "Instances", "Seconds", "Precompiled entry not loaded")
    return (
        '<section id="starts"><h2>First compiles</h2><p class=sub>Where each region instance\'s first compile came from: '
        "a precompiled entry installed at <code>torch.compile()</code> (no Dynamo trace; its seconds are the load), "
        "FX-graph/AOTAutograd cache hits (artifacts), or cold.</p>"
        f"<table>{head}{''.join(rows)}</table></section>"
    )


def _divergence(run: Run) -> str:
    ranks = run.rank_order
    if len(ranks) < 2:
        return '<section id="divergence"><h2>Cross-rank divergence</h2><p>One rank in the inputs: nothing to compare.</p></section>'
    if not run.divergence:
        return (
            f'<section id="divergence"><h2>Cross-rank divergence</h2><p class=ok>All {len(ranks)} ranks agree on every '
            "region's compiles, recompiles, graph breaks, limit hits and breaches.</p></section>"
        )
    rows = [
        _tr(d.region, d.metric, *(d.values[r] for r in ranks), ", ".join(d.odd), cls="bad divergence")
        for d in run.divergence
    ]
    head = _th("Region", "Count", *(f"rank {r}" for r in ranks), "Differing ranks")
    return (
        '<section id="divergence"><h2>Cross-rank divergence</h2><p>Regions whose counts differ between ranks: a rank '
        "compiling what its peers do not is how a compile turns into a collective timeout.</p>"
        f"<table>{head}{''.join(rows)}</table></section>"
    )


def _timeline(timeline: Timeline | None, note: str | None) -> str:
    if timeline is None:
        return f'<section id="timeline-section"><h2>Timeline</h2><p class=notes>{escape(note or "not drawn")}</p></section>'
    data = base64.b64encode(timeline.png).decode("ascii")
    cut = (
        f" Showing {timeline.rows} of {timeline.total_rows} rows (breaches, limit hits and the most compile time first);"
        " <code>trace.json</code> holds every row."
        if timeline.rows < timeline.total_rows
        else ""
    )
    kinds = ", ".join(LABELS.values())
    return (
        '<section id="timeline-section"><h2>Timeline</h2>'
        f'<img id="timeline" alt="compile timeline" width="{timeline.width}" height="{timeline.height}" '
        f'src="data:image/png;base64,{data}">'
        f"<p class=sub>Compile spans per region and rank over wall time ({escape(kinds)}); ✕ marks a budget breach.{cut}"
        " Open <code>trace.json</code> in Perfetto or <code>chrome://tracing</code> to zoom.</p></section>"
    )


def _regions(run: Run) -> str:
    trouble = {d.region for d in run.divergence}
    opened = 0
    parts = ['<section id="regions"><h2>Regions in detail</h2>']
    for i, view in enumerate(run.regions.values()):
        hot = view.breached or view.merged.limit_hits > 0 or view.name in trouble
        show = hot and opened < OPEN_DETAILS
        opened += show
        parts.append(_region(run, i, view, show))
    parts.append("</section>")
    return "".join(parts)


def _region(run: Run, index: int, view: RegionView, show: bool) -> str:
    badge = " <span class=badge>breached</span>" if view.breached else ""
    rows = [_tr("all", *_cells(view.merged, view.settings), cls="merged")]
    for rank in sorted(view.cells, key=rank_key):
        cell = view.cells[rank]
        rows.append(_tr(rank, *_cells(cell, view.settings), cls="bad" if cell.breaches else ""))
    body = (
        f"<table>{_th('Rank', *CELL_HEAD)}{''.join(rows)}</table>{_reasons(view)}{_sites(view)}{_breaches(run, view)}"
    )
    return (
        f'<details class="region" id="region-{index}" data-region="{escape(view.name)}"{" open" if show else ""}>'
        f"<summary>{escape(view.name)}{badge} <span class=sub>compiles {view.merged.compiles}, recompiles "
        f"{view.merged.recompiles}, graph breaks {view.merged.graph_breaks}, {view.merged.seconds:.2f} s</span></summary>"
        f"{body}</details>"
    )


def _reasons(view: RegionView) -> str:
    if not view.merged.reasons:
        return ""
    items = view.merged.reasons.most_common()
    rows = [
        _tr(
            cat,
            _code(guard),
            _code(site),
            gen,
            n,
            ", ".join(sorted(view.reason_ranks.get((cat, guard, site, gen), ()), key=rank_key)),
            raw=(1, 2),
        )
        for (cat, guard, site, gen), n in items[:MAX_ROWS]
    ]
    rows.extend(_more(items, 6))
    head = _th("Reason", "Guard that failed", "Site", "Generalizing", "Recompiles", "Ranks")
    return f"<h3>Recompiles by reason</h3><table>{head}{''.join(rows)}</table>"


def _sites(view: RegionView) -> str:
    if not view.merged.sites:
        return ""
    items = view.merged.sites.most_common()
    rows = [
        _tr(
            _code(site),
            reason,
            "yes" if skipped else "",
            n,
            ", ".join(sorted(view.site_ranks.get((site, reason, skipped), ()), key=rank_key)),
            raw=(0,),
        )
        for (site, reason, skipped), n in items[:MAX_ROWS]
    ]
    rows.extend(_more(items, 5))
    head = _th("Site", "Reason", "Frame skipped (eager)", "Breaks", "Ranks")
    return f"<h3>Graph breaks by site</h3><table>{head}{''.join(rows)}</table>"


def _breaches(run: Run, view: RegionView) -> str:
    if not view.merged.breaches:
        return ""
    rows = [_tr(b.rank, _rel(run, b.ts), b.kind, b.count, b.budget, b.action, cls="bad") for b in view.merged.breaches]
    head = _th("Rank", "When", "Budget", "Count", "Budget value", "Action taken")
    return f"<h3>Budget breaches</h3><table>{head}{''.join(rows)}</table>"


def _more(items: list[Any], width: int) -> list[str]:
    if len(items) <= MAX_ROWS:
        return []
    rest = sum(n for _, n in items[MAX_ROWS:])
    return [f'<tr><td colspan="{width}" class=sub>… {len(items) - MAX_ROWS} more, {rest} event(s)</td></tr>']


def _th(*names: str) -> str:
    return "<tr>" + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"


def _tr(*values: Any, cls: str = "", raw_first: bool = False, raw: tuple[int, ...] = ()) -> str:
    """A row; numbers right-aligned; values escaped unless pre-rendered (`raw_first`, `raw` column indexes)."""
    cells = []
    for i, v in enumerate(values):
        text = str(v) if (raw_first and i == 0) or i in raw else escape(str(v))
        num = isinstance(v, int | float) and not isinstance(v, bool)
        cells.append(f"<td class=n>{text}</td>" if num else f"<td>{text}</td>")
    attr = f' class="{cls}"' if cls else ""
    return f"<tr{attr}>{''.join(cells)}</tr>"


def _code(text: str) -> str:
    return f"<code>{escape(text)}</code>" if text else ""


def _clock(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S") if ts is not None else "?"


def _rel(run: Run, ts: float | None) -> str:
    if ts is None or run.t0 is None:
        return "–"
    return f"t+{ts - run.t0:.2f} s"
