"""Aggregate read events into what the report shows: per region (merged and per rank) counts, reasons, sites,
budgets and breaches; compile spans and marks over wall time; per-rank identity; cross-rank divergence."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from monitor.event_catalog import STOP_EVENTS
from monitor.report.read import Event, Reading
from monitor.report.stalls import Tracker, Unfinished
from monitor.unclaimed import LABEL as UNCLAIMED

KINDS: tuple[str, ...] = ("first", "cold", "recompile", "backward", "cudagraph", "unfinished")
"""Span kinds: first compile (cache hit or no Inductor cache), cold compile (an Inductor cache miss), recompile, lazily
compiled backward, CUDA-graph recording, and a compile that started and never ended (open until the last event)."""
CACHE_KEYS: tuple[str, ...] = ("fx_graph_hit", "fx_graph_miss", "aot_autograd_hit", "aot_autograd_miss")
COMPARED: tuple[str, ...] = ("compiles", "recompiles", "graph_breaks", "limit_hits", "breaches")
"""Per-region counts compared across ranks (a rank whose count differs did something its peers did not)."""
_CID_PREFIX = re.compile(r"^\s*\[?[!\w@]*\d+/\d+\]?:\s*")


@dataclass(slots=True)
class Span:
    """One piece of compile work on the wall clock (the event is written at its end; `seconds` is its length)."""

    rank: str
    region: str
    start: float
    end: float
    kind: str
    compile_id: str
    module: str
    cache: dict[str, int]
    reason: str = ""
    category: str = ""
    note: str = ""
    """An unfinished compile's description (what interrupted it, where it was)."""


@dataclass(slots=True)
class Mark:
    """A point event of a region: a budget breach, a recompile-limit hit or a graph break."""

    rank: str
    region: str
    ts: float
    kind: str
    text: str


@dataclass(slots=True)
class Breach:
    rank: str
    ts: float | None
    kind: str
    count: Any
    budget: Any
    action: str


@dataclass(slots=True)
class Stop:
    """An engine adapter acted on a `fail` breach: the trainer stopped, or generate() armed the breached region."""

    rank: str
    ts: float | None
    event: str
    engine: str
    step: Any
    regions: list[str]
    """This rank's breached `fail` regions (empty: it stopped because another rank breached)."""
    effect: str

    def line(self) -> str:
        """One line for the CLI: who stopped, where, on which breach."""
        why = f"a fail breach of {', '.join(self.regions)}" if self.regions else "another rank's fail breach"
        return (
            f"run stopped: rank {self.rank}: {self.engine} at step {self.step} ({self.event}) on {why}; {self.effect}"
        )


@dataclass
class Cell:
    """One region on one rank (or all ranks merged)."""

    compiles: int = 0
    first: int = 0
    flagged_recompiles: int = 0
    recompile_events: int = 0
    backward: int = 0
    cudagraph: int = 0
    graph_breaks: int = 0
    skipped_frames: int = 0
    limit_hits: int = 0
    seconds: float = 0.0
    cache: Counter[str] = field(default_factory=Counter)
    reasons: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    """(category, guard text, site, generalizing) -> recompiles."""
    sites: Counter[tuple[str, str, bool]] = field(default_factory=Counter)
    """(site, reason, skipped frame) -> graph breaks."""
    budget_recompiles: int = 0
    break_sites: int = 0
    breaches: list[Breach] = field(default_factory=list)
    starts: Counter[str] = field(default_factory=Counter)
    """Region instances by where their first compile came from (`first_compile` events: precompile, artifacts, cold)."""
    start_seconds: Counter[str] = field(default_factory=Counter)
    """Their seconds, by the same source."""
    unloaded: Counter[str] = field(default_factory=Counter)
    """`cold_compile` events of a precompiled entry that did not load, by cause and reason."""

    @property
    def recompiles(self) -> int:
        """Recompiles: `recompile` events, or compiles flagged as recompiles when those lines are missing."""
        return max(self.recompile_events, self.flagged_recompiles)

    def count(self, metric: str) -> int:
        """A compared count by name (`breaches` is how many budgets broke)."""
        return len(self.breaches) if metric == "breaches" else int(getattr(self, metric))

    def merge(self, other: Cell) -> None:
        """Add another rank's cell (budget use is the worst rank's, like the metric)."""
        for name in ("compiles", "first", "flagged_recompiles", "recompile_events", "backward", "cudagraph"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("graph_breaks", "skipped_frames", "limit_hits", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cache.update(other.cache)
        self.starts.update(other.starts)
        self.start_seconds.update(other.start_seconds)
        self.unloaded.update(other.unloaded)
        self.reasons.update(other.reasons)
        self.sites.update(other.sites)
        self.budget_recompiles = max(self.budget_recompiles, other.budget_recompiles)
        self.break_sites = max(self.break_sites, other.break_sites)
        self.breaches.extend(other.breaches)


@dataclass
class RegionView:
    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    cells: dict[str, Cell] = field(default_factory=dict)
    merged: Cell = field(default_factory=Cell)
    reason_ranks: dict[tuple[str, str, str, str], set[str]] = field(default_factory=dict)
    site_ranks: dict[tuple[str, str, bool], set[str]] = field(default_factory=dict)

    def cell(self, rank: str) -> Cell:
        got = self.cells.get(rank)
        if got is None:
            got = self.cells[rank] = Cell()
        return got

    @property
    def breached(self) -> bool:
        return bool(self.merged.breaches)


@dataclass
class RankInfo:
    """What one rank's stream says about itself."""

    rank: str
    starts: list[dict[str, Any]] = field(default_factory=list)
    stopped: int = 0
    events: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    warm_ts: float | None = None
    resets: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    degraded: dict[str, str] = field(default_factory=dict)
    """Capabilities the monitor could not read from this rank's torch (`monitor_degraded`) -> what that lost."""
    sources: set[int] = field(default_factory=set)
    """Indexes of the input files this rank's events came from."""

    @property
    def identity(self) -> dict[str, Any]:
        """The latest `monitor_started` fields (empty when the stream has none)."""
        return self.starts[-1] if self.starts else {}


@dataclass(slots=True)
class Divergence:
    region: str
    metric: str
    values: dict[str, int]
    odd: list[str]
    """Ranks whose value differs from their peers' (the most common value; on a tie, the smallest)."""


@dataclass
class Run:
    """Everything the HTML page, the timeline and the trace render."""

    reading: Reading
    regions: dict[str, RegionView] = field(default_factory=dict)
    ranks: dict[str, RankInfo] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    divergence: list[Divergence] = field(default_factory=list)
    unfinished: list[Unfinished] = field(default_factory=list)
    """Compiles that started and never ended, oldest first."""
    stops: list[Stop] = field(default_factory=list)
    """Where an engine adapter stopped the run on a `fail` breach, in input order."""
    stalls: Tracker = field(default_factory=Tracker)
    notes: list[str] = field(default_factory=list)
    t0: float | None = None
    t1: float | None = None

    @property
    def rank_order(self) -> list[str]:
        return sorted(self.ranks, key=rank_key)

    def region(self, name: str) -> RegionView:
        got = self.regions.get(name)
        if got is None:
            got = self.regions[name] = RegionView(name)
        return got

    @property
    def contracts(self) -> list[tuple[str, str, str]]:
        """Distinct (name, sha256, path) of the contracts the ranks enforced."""
        seen: dict[tuple[str, str, str], None] = {}
        for info in self.ranks.values():
            for s in info.starts:
                seen[(_s(s.get("contract")), _s(s.get("contract_sha256")), _s(s.get("contract_path")))] = None
        return list(seen)


def rank_key(rank: str) -> tuple[int, int, str]:
    """Numeric ranks first, in order; file-named ones after."""
    return (0, int(rank), "") if rank.lstrip("-").isdigit() else (1, 0, rank)


def build(reading: Reading) -> Run:
    """Aggregate every event, then merge ranks, find divergence and note what looks inconsistent."""
    run = Run(reading)
    pending: dict[tuple[str, str], list[Span]] = {}
    for event in reading.events:
        _apply(run, event, pending)
    _open_spans(run)
    for view in run.regions.values():
        for rank in sorted(view.cells, key=rank_key):
            view.merged.merge(view.cells[rank])
    run.divergence = divergence(run)
    run.notes.extend(_consistency(run))
    return run


def _apply(run: Run, e: Event, pending: dict[tuple[str, str], list[Span]]) -> None:
    rank = e.rank or "0"
    info = run.ranks.get(rank)
    if info is None:
        info = run.ranks[rank] = RankInfo(rank)
    info.events += 1
    info.sources.add(e.source)
    ts = e.ts
    if ts is not None:
        if info.first_ts is None or ts < info.first_ts:
            info.first_ts = ts
        if info.last_ts is None or ts > info.last_ts:
            info.last_ts = ts
        if run.t0 is None or ts < run.t0:
            run.t0 = ts
        if run.t1 is None or ts > run.t1:
            run.t1 = ts
    handler = _HANDLERS.get(e.name)
    if handler is not None:
        handler(run, e, rank, info, pending)


def _started(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    info.starts.append(e.fields)
    settings = e.fields.get("region_settings")
    if isinstance(settings, dict):
        for name, values in settings.items():
            if isinstance(name, str) and isinstance(values, dict):
                view = run.region(name)
                view.settings = view.settings or values


def _compile(run: Run, e: Event, rank: str, info: RankInfo, pending: dict[tuple[str, str], list[Span]]) -> None:
    f = e.fields
    run.stalls.ended(e, rank)
    view = run.region(f["region"])
    cell = view.cell(rank)
    seconds = _float(f.get("seconds"))
    cache = _cache(f)
    cell.compiles += 1
    cell.seconds += seconds
    _add(cell.cache, cache)
    recompile = f.get("recompile") is True
    if recompile:
        cell.flagged_recompiles += 1
    else:
        cell.first += 1
    if e.ts is None:
        return
    cold = cache.get("fx_graph_miss", 0) + cache.get("aot_autograd_miss", 0) > 0
    kind = "recompile" if recompile else "cold" if cold else "first"
    span = Span(rank, view.name, e.ts - seconds, e.ts, kind, _s(f.get("compile_id")), _s(f.get("module")), cache)
    run.spans.append(span)
    if recompile:
        pending.setdefault((rank, view.name), []).append(span)
    run.t0 = min(run.t0 or span.start, span.start)


def _aux(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    f = e.fields
    run.stalls.ended(e, rank)
    view = run.region(f["region"])
    cell = view.cell(rank)
    seconds = _float(f.get("seconds"))
    cache = _cache(f)
    cell.seconds += seconds
    _add(cell.cache, cache)
    backward = _s(f.get("trigger")).lower() in ("lazy_backward", "backward")
    if backward:
        cell.backward += 1
    else:
        cell.cudagraph += 1
    if e.ts is not None:
        kind = "backward" if backward else "cudagraph"
        span = Span(rank, view.name, e.ts - seconds, e.ts, kind, _s(f.get("compile_id")), "", cache)
        run.spans.append(span)
        run.t0 = min(run.t0 or span.start, span.start)


def _unclaimed(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    """A compile no region claims: a row of its own (`<unclaimed>`), its spans named by the compiled code, its
    recompiles' guards listed like a region's."""
    f = e.fields
    as_compile = replace(e, fields={**f, "region": UNCLAIMED, "module": _s(f.get("name"))})
    _compile(run, as_compile, rank, info, {})
    if f.get("recompile") is True:
        cell = run.region(UNCLAIMED).cell(rank)
        cell.recompile_events += 1
        key = (_s(f.get("reason")) or "other", _s(f.get("guard")), _s(f.get("guard_site")), "")
        cell.reasons[key] += 1
        run.region(UNCLAIMED).reason_ranks.setdefault(key, set()).add(rank)


def _recompile(run: Run, e: Event, rank: str, info: RankInfo, pending: dict[tuple[str, str], list[Span]]) -> None:
    f = e.fields
    view = run.region(f["region"])
    cell = view.cell(rank)
    cell.recompile_events += 1
    guard = _CID_PREFIX.sub("", _s(f.get("guard")), count=1)
    gen = f.get("generalizing")
    key = (_s(f.get("reason")) or "other", guard, _s(f.get("site")), "yes" if gen is True else "")
    cell.reasons[key] += 1
    view.reason_ranks.setdefault(key, set()).add(rank)
    if f.get("counted") is not False:
        cell.budget_recompiles = max(cell.budget_recompiles, _int(f.get("count")))
    if isinstance(f.get("budget"), int) and "recompile_budget" not in view.settings:
        view.settings = {**view.settings, "recompile_budget": f["budget"]}
    span = _pop_span(pending, (rank, view.name), _s(f.get("compile_id")))
    if span is not None:
        span.reason, span.category = guard, key[0]


def _pop_span(pending: dict[tuple[str, str], list[Span]], key: tuple[str, str], cid: str) -> Span | None:
    """The recompile span a `recompile` event explains: same compile id when the event has one, else the latest."""
    spans = pending.get(key)
    if not spans:
        return None
    for i in range(len(spans) - 1, -1, -1):
        if not cid or spans[i].compile_id == cid:
            return spans.pop(i)
    return None


def _first_compile(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    """Where one region instance's first compile came from, and its seconds."""
    f = e.fields
    cell = run.region(f["region"]).cell(rank)
    source = _s(f.get("source")) or "?"
    cell.starts[source] += 1
    cell.start_seconds[source] += _float(f.get("seconds"))  # type: ignore[assignment]


def _cold_compile(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    """A precompiled entry that did not load (`cause` `precompile_*`): its reason, counted per region."""
    f = e.fields
    cause = _s(f.get("cause"))
    if cause.startswith("precompile_"):
        reason = " ".join(_s(f.get("reason")).split())[:200]
        run.region(f["region"]).cell(rank).unloaded[f"{cause.removeprefix('precompile_')}: {reason}"] += 1


def _graph_break(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    f = e.fields
    view = run.region(f["region"])
    cell = view.cell(rank)
    skipped = f.get("skipped_frame") is True
    cell.graph_breaks += 1
    cell.skipped_frames += skipped
    reason = _s(f.get("reason")).split("\n", 1)[0]
    key = (_s(f.get("site")) or ("(frame skipped)" if skipped else "(unknown site)"), reason, skipped)
    cell.sites[key] += 1
    view.site_ranks.setdefault(key, set()).add(rank)
    cell.break_sites = max(cell.break_sites, _int(f.get("sites")))
    if e.ts is not None:
        run.marks.append(Mark(rank, view.name, e.ts, "graph_break", f"{key[0]} {reason}".strip()))


def _breach(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    f = e.fields
    run.stalls.breached(e, rank)
    view = run.region(f["region"])
    kind, action = _s(f.get("budget_kind")) or "budget", _s(f.get("action")) or "?"
    view.cell(rank).breaches.append(Breach(rank, e.ts, kind, f.get("count"), f.get("budget"), action))
    if e.ts is not None:
        run.marks.append(
            Mark(rank, view.name, e.ts, "breach", f"{kind} exceeded ({f.get('count')} > {f.get('budget')}): {action}")
        )


def _limit_hit(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    f = e.fields
    view = run.region(f["region"])
    view.cell(rank).limit_hits += 1
    if e.ts is not None:
        run.marks.append(Mark(rank, view.name, e.ts, "limit_hit", _s(f.get("last_reason"))))


def _stopped(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    """An adapter's stop on a `fail` breach: why the run ended (or why the next call raises)."""
    f = e.fields
    regions = [r for r in f.get("regions", []) if isinstance(r, str)] if isinstance(f.get("regions"), list) else []
    step = f.get("step") if isinstance(f.get("step"), int | str) else "?"
    run.stops.append(Stop(rank, e.ts, e.name, _s(f.get("engine")) or "?", step, regions, _s(f.get("effect"))))


def _rank_event(run: Run, e: Event, rank: str, info: RankInfo, pending: Any) -> None:
    if e.name == "monitor_stopped":
        info.stopped += 1
        run.stalls.stopped(e, rank)
    elif e.name == "monitor_warm":
        info.warm_ts = info.warm_ts or e.ts
    elif e.name == "dynamo_reset_seen":
        info.resets += 1
    elif e.name == "monitor_error":
        info.errors[_s(e.fields.get("kind")) or "?"] += 1
    elif e.name == "monitor_degraded":
        info.degraded.setdefault(_s(e.fields.get("capability")) or "?", _s(e.fields.get("effect")))
    elif e.name == "metrics_port_unavailable":
        info.errors["port_in_use"] += 1


_HANDLERS = {
    "monitor_started": _started,
    "compile": _compile,
    "aux_compile": _aux,
    "recompile": _recompile,
    "unclaimed_compile": _unclaimed,
    "graph_break": _graph_break,
    "first_compile": _first_compile,
    "cold_compile": _cold_compile,
    "budget_exceeded": _breach,
    "recompile_limit_hit": _limit_hit,
    "monitor_stopped": _rank_event,
    "monitor_warm": _rank_event,
    "dynamo_reset_seen": _rank_event,
    "monitor_error": _rank_event,
    "monitor_degraded": _rank_event,
    "metrics_port_unavailable": _rank_event,
    "warm_manifest_unreadable": _rank_event,
    **dict.fromkeys(STOP_EVENTS, _stopped),
    "compile_started": lambda run, e, rank, *_: run.stalls.started(e, rank),
    "compile_finished": lambda run, e, rank, *_: run.stalls.ended(e, rank),
    "compile_interrupted": lambda run, e, rank, *_: run.stalls.interrupted(e, rank),
}


def _open_spans(run: Run) -> None:
    """Each unfinished compile as a span open until the inputs' last event (its region gets a row on that rank)."""
    run.unfinished = run.stalls.result()
    for u in run.unfinished:
        run.region(u.region).cell(u.rank)
        if u.start is None:
            continue
        end = max(run.t1 or u.start, u.start + (u.seconds or 0.0))
        why = f"interrupted by {u.interrupted}" if u.interrupted else "no end event"
        at = f"; at {u.phase}" if u.phase else ""
        lock = f"; waiting for {u.waiting_on}" if u.waiting_on else ""
        note = f"unfinished ({why}){at}{lock}"
        run.spans.append(Span(u.rank, u.region, u.start, end, "unfinished", u.compile_id, u.module, {}, note=note))
        run.t1 = max(run.t1 or end, end)


def divergence(run: Run) -> list[Divergence]:
    """Regions whose compared counts differ between ranks (every rank of the run counts, 0 where it has nothing)."""
    ranks = run.rank_order
    if len(ranks) < 2:
        return []
    rows = []
    empty = Cell()
    for view in run.regions.values():
        for metric in COMPARED:
            values = {r: view.cells.get(r, empty).count(metric) for r in ranks}
            if len(set(values.values())) > 1:
                rows.append(Divergence(view.name, metric, values, _odd(values)))
    return rows


def _odd(values: dict[str, int]) -> list[str]:
    counts = Counter(values.values())
    top = max(counts.values())
    usual = min(v for v, n in counts.items() if n == top)
    return [r for r, v in values.items() if v != usual]


def _consistency(run: Run) -> list[str]:
    """Things the reader should know before trusting the numbers."""
    notes = []
    if len(run.contracts) > 1:
        names = ", ".join(f"{n or '?'} ({sha[:12] or '?'})" for n, sha, _ in run.contracts)
        notes.append(f"the inputs hold more than one contract: {names}; counts mix them")
    for info in run.ranks.values():
        if len(info.starts) > 1:
            notes.append(
                f"rank {info.rank}: {len(info.starts)} monitor starts (appended runs or restarts); counts cover all of them"
            )
        if info.starts and not info.stopped:
            notes.append(f"rank {info.rank}: no `monitor_stopped` event: the process ended early or the log is cut off")
    lost: dict[tuple[str, str], list[str]] = {}
    for info in run.ranks.values():
        for capability, effect in info.degraded.items():
            lost.setdefault((capability, effect), []).append(info.rank)
    for (capability, effect), ranks in lost.items():
        torch = run.ranks[ranks[0]].identity.get("torch") or "?"
        notes.append(
            f"rank{'s' if len(ranks) > 1 else ''} {', '.join(ranks)}: the monitor could not read {capability} from "
            f"torch {torch} (`monitor_degraded`): {effect or 'see the event'}"
        )
    return notes


def _cache(fields: dict[str, Any]) -> dict[str, int]:
    """Cache lookups of one compile (`fx_graph_hit`, ...): positive ints only."""
    out = {}
    for k in CACHE_KEYS:
        if k in fields and type(v := fields[k]) is int and v > 0:
            out[k] = v
    return out


def _add(total: Counter[str], cache: dict[str, int]) -> None:
    for k, v in cache.items():
        total[k] += v


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e7  # NaN, inf: 0
    return float(value) if ok else 0.0
