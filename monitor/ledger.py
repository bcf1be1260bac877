"""The one place the monitor's state lives: fixed-size per-region stats behind one lock, no per-event lists."""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from compile_formats.reasons import CATEGORIES
from contract.document.schema import Region
from monitor.unclaimed import LABEL as UNCLAIMED
from monitor.unclaimed import Unclaimed

BUCKETS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
"""Upper bounds (seconds) of the compile-time histogram, shared with ops/ dashboards."""
CACHES: tuple[str, ...] = ("fx_graph", "aot_autograd")
"""Cache label values of `torch_compile_cache_lookups_total`."""
SOURCES: tuple[str, ...] = ("precompile", "artifacts", "cold")
"""Where a region instance's first compile came from (`source` label of `torch_compile_first_compiles_total`): torch's
precompiled entry installed at `torch.compile()` (no Dynamo trace), a Dynamo compile whose Inductor work hit the
FX-graph / AOTAutograd caches (portable artifacts or the local cache dir), or a Dynamo compile that missed them."""
ERROR_KINDS: tuple[str, ...] = ("hook", "attribution", "export", "snapshot", "push", "port_in_use", "events", "event")
"""Kind label values of `torch_compile_monitor_errors_total`."""
LAST_REASONS = 8
"""Guard-failure texts kept per region (for `RecompileBudgetExceeded` and the breach log line)."""
ID_MAP_SIZE = 4096
"""Compile ids remembered for lazily compiled backwards and CUDA-graph recordings (oldest dropped first)."""
MAX_FRAMES = 1024
"""Code objects remembered per region instance (beyond that a compile counts as a first compile)."""
EXPORT_COLUMNS: tuple[tuple[str, int], ...] = (
    ("compiles", 1),
    ("graph_breaks", 1),
    ("limit_hits", 1),
    ("recompiles_by_reason", len(CATEGORIES)),
    ("cache", 2 * len(CACHES)),
    ("buckets", len(BUCKETS)),
    ("compile_events", 1),
    ("compile_seconds", 1),
    ("recompile_budget", 1),
    ("budget_recompiles", 1),
    ("graph_break_budget", 1),
    ("budget_graph_breaks", 1),
    ("budget_exceeded", 1),
    ("eager_fallback", 1),
    ("ddp_splits", 1),
    ("cold_compiles", 1),
    ("compile_seconds_budget", 1),
    ("budget_compile_seconds", 1),
    ("first_compiles", len(SOURCES)),
    ("first_compile_seconds", len(SOURCES)),
)
"""A row of `Ledger.export()`, in order: (column, width). The exporter reads rows through `COLUMNS` by name."""


def _layout(columns: tuple[tuple[str, int], ...]) -> dict[str, slice]:
    out, at = {}, 0
    for name, width in columns:
        out[name] = slice(at, at + width)
        at += width
    return out


COLUMNS: dict[str, slice] = _layout(EXPORT_COLUMNS)
"""Column name -> its slice of an export row (a one-wide column's value is `row[COLUMNS[name].start]`)."""
ROW_WIDTH = sum(width for _, width in EXPORT_COLUMNS)
MAX_SITES = 256
"""Distinct graph-break sites remembered per region instance (the count saturates there, far above any budget)."""


@dataclass(kw_only=True)
class InstanceStats:
    """One region instance (region, id(module)): the unit a recompile budget applies to."""

    compiles: int = 0
    """Compiles of this instance, all its frames (resume functions and hooks included)."""
    recompiles: int = 0
    """Compiles of a frame this instance had already compiled (since the last Dynamo reset)."""
    budget_recompiles: int = 0
    """Recompiles counted against the budget (after warm-up)."""
    frames: set[str] = field(default_factory=set)
    """Dynamo frame ids this instance compiled since the last reset."""
    break_sites: set[str] = field(default_factory=set)
    """Distinct graph-break sites (user `file:line` + reason) of this instance since the last reset: what
    `graph_break_budget` bounds (a frame compile stops at its first break, so per-compile counts are never > 1)."""
    first: str | None = None
    """Where its first compile came from (`SOURCES`), None before it."""
    preloaded: bool = False
    """Its code came from a precompiled entry: any Dynamo compile of it is a guard miss of that code (a recompile)."""


@dataclass(kw_only=True)
class RegionStats:
    """Per-region counters; every field is a fixed-size number, flag, or bounded container."""

    region: Region
    """Resolved contract settings (budgets, action, warm-up)."""
    compiles: int = 0
    recompiles: int = 0
    by_reason: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    graph_breaks: int = 0
    skipped_frames: int = 0
    """Compiles Dynamo gave up on (the frame runs eager); each is also one of `graph_breaks`."""
    ddp_splits: int = 0
    """Graph splits DDPOptimizer made at gradient-bucket boundaries (not graph breaks: never budgeted)."""
    compile_seconds: float = 0.0
    compile_events: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    cache: dict[tuple[str, str], int] = field(
        default_factory=lambda: {(c, r): 0 for c in CACHES for r in ("hit", "miss")}
    )
    limit_hits: int = 0
    budget_recompiles: int = 0
    budget_graph_breaks: int = 0
    """Distinct graph-break sites of the region's worst instance (compared with `graph_break_budget`)."""
    breaches: list[str] = field(default_factory=list)
    eager_fallback: bool = False
    fail_armed: bool = False
    backward_compiles: int = 0
    cudagraph_recordings: int = 0
    last_reasons: deque[str] = field(default_factory=lambda: deque(maxlen=LAST_REASONS))
    instances: dict[int, InstanceStats] = field(default_factory=dict)
    cold_compiles: int = 0
    """Compiles that missed the cache although the warm manifest recorded them (`cold_compile` events)."""
    budget_compile_seconds: float = 0.0
    """The longest compile counted against `compile_seconds_budget` (first compiles, recompiles after warm-up)."""
    first_compiles: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))
    """Region instances by where their first compile came from."""
    first_compile_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0.0))
    """Their seconds (a precompile hit: its `torch.compile()` wrap, which reads and installs the entry)."""
    served: int = 0
    """Instances of an engine region that run code Dynamo compiled earlier for an instance outside the contract (the
    region had no compile of its own): no compile fired for them."""


class Outcome(NamedTuple):
    """What the ledger concluded from one compile (a tuple: built on every compile, so no dataclass machinery)."""

    recompile: bool
    """This instance had compiled this frame before."""
    counted: bool
    """The recompile counts against the budget (warm-up is over)."""
    budget_recompiles: int
    """The instance's recompiles counted against the budget."""
    breach: str | None
    """The budget this compile newly exceeded, if any."""
    first_breach: bool
    """The region's first breach (its on_breach action runs now)."""
    break_sites: int
    """The instance's distinct graph-break sites (what `graph_break_budget` bounds)."""


class Ledger:
    """Per-region state, updated from Dynamo's callbacks and read at scrape/snapshot time."""

    def __init__(
        self,
        regions: Iterable[Region],
        *,
        manual_warmup: bool = False,
        unclaimed_budget: int | None = None,
        degraded: Iterable[str] = (),
        unclaimed_on_breach: str = "alert",
    ) -> None:
        self._lock = threading.Lock()
        self._regions = {r.name: RegionStats(region=r) for r in regions}
        self._ids: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._frames: OrderedDict[str, str] = OrderedDict()
        self.manual_warmup = manual_warmup
        self.warm = False
        self.errors = dict.fromkeys(ERROR_KINDS, 0)
        self.unclaimed = Unclaimed(unclaimed_budget, unclaimed_on_breach)
        """Compiles no region claims (its own lock: they never touch a region's stats)."""
        self.resets = 0
        self.degraded = frozenset(degraded)
        """Capabilities this torch lacks (`monitor.capabilities`), fixed at start: what the monitor cannot count."""

    @property
    def region_names(self) -> tuple[str, ...]:
        """Region names in contract order."""
        return tuple(self._regions)

    def record_compile(
        self,
        region: str,
        instance: int,
        compile_id: str,
        seconds: float,
        breaks: tuple[tuple[str, str], ...] = (),
        cache: dict[tuple[str, str], int] | None = None,
        splits: int = 0,
    ) -> Outcome:
        """Count one compile for its instance; decide recompile, warm-up and budget breach (reason comes later).

        `breaks` holds (site, reason) of each graph break this compile made; `splits` the gradient-bucket splits
        DDPOptimizer made in it (counted apart: never against `graph_break_budget`).
        """
        with self._lock:
            rs = self._regions[region]
            inst = self._instance(rs, instance)
            frame = compile_id.rpartition("/")[0]
            recompile = frame in inst.frames or inst.preloaded
            if not recompile and len(inst.frames) < MAX_FRAMES:
                inst.frames.add(frame)
            inst.compiles += 1
            rs.compiles += 1
            self._remember(compile_id, frame, region, instance)
            self._observe(rs, seconds)
            if breaks:
                rs.graph_breaks += len(breaks)
                self._add_sites(rs, inst, [f"{site} {_first_line(reason)}" for site, reason in breaks])
            rs.ddp_splits += splits
            self._add_cache(rs, cache)
            counted = recompile and self._counts(rs, inst)
            if recompile:
                inst.recompiles += 1
                rs.recompiles += 1
            if counted:
                inst.budget_recompiles += 1
                rs.budget_recompiles = max(rs.budget_recompiles, inst.budget_recompiles)
            breach = self._breach(rs, inst)
            return Outcome(
                recompile,
                counted,
                inst.budget_recompiles,
                breach,
                breach is not None and len(rs.breaches) == 1,
                len(inst.break_sites),
            )

    def record_skipped_frame(self, region: str, instance: int, site: str, breaks_counted: int) -> Outcome:
        """A compile whose frame Dynamo skipped (runs eager): one graph-break site (a graph break too, unless that
        compile already counted its breaks)."""
        with self._lock:
            rs = self._regions[region]
            inst = self._instance(rs, instance)
            rs.skipped_frames += 1
            if not breaks_counted:
                rs.graph_breaks += 1
            self._add_sites(rs, inst, [f"skipped {site}"])
            breach = self._breach(rs, inst)
            return Outcome(
                False,
                False,
                inst.budget_recompiles,
                breach,
                breach is not None and len(rs.breaches) == 1,
                len(inst.break_sites),
            )

    @staticmethod
    def _instance(rs: RegionStats, instance: int) -> InstanceStats:
        """The stats of one region instance, created at its first event."""
        inst = rs.instances.get(instance)
        if inst is None:
            inst = rs.instances[instance] = InstanceStats()
        return inst

    @staticmethod
    def _add_sites(rs: RegionStats, inst: InstanceStats, sites: list[str]) -> None:
        for site in sites:
            if len(inst.break_sites) < MAX_SITES:
                inst.break_sites.add(site)
        rs.budget_graph_breaks = max(rs.budget_graph_breaks, len(inst.break_sites))

    @staticmethod
    def _add_cache(rs: RegionStats, cache: dict[tuple[str, str], int] | None) -> None:
        if cache:
            for key, n in cache.items():
                rs.cache[key] = rs.cache.get(key, 0) + n

    def record_first(self, region: str, instance: int, source: str, seconds: float, *, preloaded: bool = False) -> bool:
        """Where the instance's first compile came from (once per instance: False when it was already known);
        `preloaded`: its code is a precompiled entry, so any Dynamo compile of it is a recompile."""
        with self._lock:
            rs = self._regions[region]
            inst = self._instance(rs, instance)
            if inst.first is not None:
                return False
            inst.first, inst.preloaded = source, preloaded
            rs.first_compiles[source] += 1
            rs.first_compile_seconds[source] += seconds
            return True

    def first_source(self, region: str, instance: int) -> str | None:
        """Where the instance's first compile came from, None while it has not compiled."""
        with self._lock:
            inst = self._regions[region].instances.get(instance)
            return inst.first if inst is not None else None

    def record_cold(self, region: str) -> None:
        """A compile of the region missed the cache although the warm manifest recorded it."""
        with self._lock:
            self._regions[region].cold_compiles += 1

    def record_served(self, region: str, instance: int) -> None:
        """An instance whose calls run code Dynamo compiled for another instance: it runs compiled, with no compile."""
        with self._lock:
            rs = self._regions[region]
            self._instance(rs, instance)
            rs.served += 1

    def compiles_of(self, region: str) -> int:
        """Compiles of the region so far (all instances)."""
        with self._lock:
            return self._regions[region].compiles

    def record_compile_seconds(self, region: str, seconds: float) -> Outcome | None:
        """One counted compile's duration against `compile_seconds_budget`; an Outcome on the region's first breach
        of it (`breach="compile_seconds_budget"`), else None."""
        with self._lock:
            rs = self._regions[region]
            rs.budget_compile_seconds = max(rs.budget_compile_seconds, seconds)
            budget = rs.region.compile_seconds_budget
            if budget is None or seconds <= budget or "compile_seconds_budget" in rs.breaches:
                return None
            rs.breaches.append("compile_seconds_budget")
            return Outcome(False, True, rs.budget_recompiles, "compile_seconds_budget", len(rs.breaches) == 1, 0)

    def record_breach(self, region: str, kind: str, reason: str) -> Outcome | None:
        """A breach that is no count over a budget (`engine_settings`: the engine compiled with other settings); an
        Outcome the first time the region has it, else None."""
        with self._lock:
            rs = self._regions[region]
            if kind in rs.breaches:
                return None
            rs.breaches.append(kind)
            rs.last_reasons.append(reason)
            return Outcome(False, True, rs.budget_recompiles, kind, len(rs.breaches) == 1, 0)

    def would_count(self, region: str, instance: int, compile_id: str) -> bool:
        """At a compile's start: whether `record_compile` will count it against `compile_seconds_budget` (a first
        compile of the frame, or a recompile once warm), so the budget can be judged while it runs."""
        with self._lock:
            rs = self._regions[region]
            inst = rs.instances.get(instance)
            if inst is None or compile_id.rpartition("/")[0] not in inst.frames:
                return True
            return self.warm or (not self.manual_warmup and inst.compiles + 1 > rs.region.warmup_compiles)

    def record_reason(self, region: str, category: str, reason: str | None) -> None:
        """The guard-failure category (metric label) and bounded text of a recompile `record_compile` reported."""
        with self._lock:
            rs = self._regions[region]
            rs.by_reason[category] += 1
            if reason:
                rs.last_reasons.append(reason)

    def last_reasons(self, region: str) -> tuple[str, ...]:
        """The region's latest guard-failure texts, oldest first (for the breach error and log line)."""
        with self._lock:
            return tuple(self._regions[region].last_reasons)

    def _counts(self, rs: RegionStats, inst: InstanceStats) -> bool:
        """A recompile counts once warm: after mark_warm(), or past the region's warm-up allowance."""
        return self.warm or (not self.manual_warmup and inst.compiles > rs.region.warmup_compiles)

    @staticmethod
    def _breach(rs: RegionStats, inst: InstanceStats) -> str | None:
        """The budget newly exceeded by this instance (each kind reported once per region)."""
        region, breaches = rs.region, rs.breaches
        if inst.budget_recompiles > region.recompile_budget and "recompile_budget" not in breaches:
            breaches.append("recompile_budget")
            return "recompile_budget"
        if len(inst.break_sites) > region.graph_break_budget and "graph_break_budget" not in breaches:
            breaches.append("graph_break_budget")
            return "graph_break_budget"
        return None

    @staticmethod
    def _observe(rs: RegionStats, seconds: float) -> None:
        rs.compile_seconds += seconds
        rs.compile_events += 1
        i = bisect_left(BUCKETS, seconds)
        if i < len(BUCKETS):
            rs.buckets[i] += 1

    def _remember(self, compile_id: str, frame: str, region: str, instance: int) -> None:
        """Bounded compile_id -> instance and frame -> region maps (backward, cudagraph, limit hits)."""
        ids, frames = self._ids, self._frames
        ids[compile_id] = (region, instance)
        ids.move_to_end(compile_id)
        frames[frame] = region
        frames.move_to_end(frame)
        if len(ids) > ID_MAP_SIZE:
            ids.popitem(last=False)
        if len(frames) > ID_MAP_SIZE:
            frames.popitem(last=False)

    def owner(self, compile_id: str) -> tuple[str, int] | None:
        """(region, instance) of a compile id seen before (lazy backward, CUDA-graph recording)."""
        with self._lock:
            return self._ids.get(compile_id)

    def record_aux(
        self, region: str, trigger: str, seconds: float, cache: dict[tuple[str, str], int] | None = None
    ) -> None:
        """Compile work that is not a Dynamo frame compile: lazy backward (with its cache lookups), CUDA graphs."""
        with self._lock:
            rs = self._regions[region]
            self._observe(rs, seconds)
            self._add_cache(rs, cache)
            if trigger == "LAZY_BACKWARD":
                rs.backward_compiles += 1
            else:
                rs.cudagraph_recordings += 1

    def record_limit_hit(self, region: str, reason: str | None) -> None:
        """Dynamo refused to compile a frame of this region again: it now runs eager for new inputs."""
        with self._lock:
            rs = self._regions[region]
            rs.limit_hits += 1
            if reason:
                rs.last_reasons.append(reason)

    def set_action(self, region: str, *, eager: bool = False, fail: bool = False) -> None:
        """Record the action the monitor took on a region."""
        with self._lock:
            rs = self._regions[region]
            rs.eager_fallback = rs.eager_fallback or eager
            rs.fail_armed = rs.fail_armed or fail

    def mark_warm(self) -> None:
        """End warm-up: from now on every recompile counts against its region's budget."""
        with self._lock:
            self.warm = True

    def on_reset(self) -> None:
        """Dynamo forgot every compile: first compiles after this are not recompiles; compile ids restart."""
        with self._lock:
            self.resets += 1
            self._ids.clear()
            self._frames.clear()
            for rs in self._regions.values():
                for inst in rs.instances.values():
                    inst.frames.clear()
                    inst.break_sites.clear()
                    inst.preloaded = False  # the reset dropped the installed entries too

    def error(self, kind: str) -> int:
        """Count one internal error of a known kind; returns the new count."""
        with self._lock:
            self.errors[kind] += 1
            return self.errors[kind]

    def region_of_frame(self, frame: str) -> str | None:
        """Region that last compiled a Dynamo frame id."""
        with self._lock:
            return self._frames.get(frame)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Plain data per region, stable keys (what `Monitor.snapshot()` and the exporter read); once a compile no
        region claims happened, an `<unclaimed>` entry too (the report's row), with the same keys and `codes`."""
        with self._lock:
            out = {name: _region_dict(rs) for name, rs in self._regions.items()}
        unclaimed = self.unclaimed.export()
        if unclaimed["compiles"]:
            out[UNCLAIMED] = _unclaimed_dict(unclaimed)
        return out

    def export(self) -> tuple[list[tuple], dict[str, Any]]:
        """One consistent read for the exporter: a flat row per region (contract order, laid out as `EXPORT_COLUMNS`)
        and the monitor-wide totals."""
        with self._lock:
            rows = [
                (
                    rs.compiles,
                    rs.graph_breaks,
                    rs.limit_hits,
                    *rs.by_reason.values(),
                    *rs.cache.values(),
                    *rs.buckets,
                    rs.compile_events,
                    rs.compile_seconds,
                    rs.region.recompile_budget,
                    rs.budget_recompiles,
                    rs.region.graph_break_budget,
                    rs.budget_graph_breaks,
                    1 if rs.breaches else 0,
                    1 if rs.eager_fallback else 0,
                    rs.ddp_splits,
                    rs.cold_compiles,
                    _budget(rs.region.compile_seconds_budget),
                    rs.budget_compile_seconds,
                    *rs.first_compiles.values(),
                    *rs.first_compile_seconds.values(),
                )
                for rs in self._regions.values()
            ]
            return rows, self._totals()

    def totals(self) -> dict[str, Any]:
        """Monitor-wide values: warm flag, internal errors, unclaimed compiles, resets seen, capabilities lost."""
        with self._lock:
            return self._totals()

    def _totals(self) -> dict[str, Any]:
        return {
            "warm": self.warm,
            "errors": dict(self.errors),
            "unclaimed": self.unclaimed.export(),
            "resets": self.resets,
            "degraded": self.degraded,
        }


def _region_dict(rs: RegionStats) -> dict[str, Any]:
    r = rs.region
    return {
        "compiles": rs.compiles,
        "recompiles": rs.recompiles,
        "graph_breaks": rs.graph_breaks,
        "skipped_frames": rs.skipped_frames,
        "ddp_splits": rs.ddp_splits,
        "breached": bool(rs.breaches),
        "eager_fallback": rs.eager_fallback,
        "compile_seconds": rs.compile_seconds,
        "budget_recompiles": rs.budget_recompiles,
        "budget_graph_breaks": rs.budget_graph_breaks,
        "recompile_budget": r.recompile_budget,
        "graph_break_budget": r.graph_break_budget,
        "on_breach": r.on_breach,
        "breaches": list(rs.breaches),
        "fail_armed": rs.fail_armed,
        "recompile_limit_hits": rs.limit_hits,
        "recompiles_by_reason": dict(rs.by_reason),
        "cache": {c: {res: rs.cache[(c, res)] for res in ("hit", "miss")} for c in CACHES},
        "compile_events": rs.compile_events,
        "compile_seconds_buckets": list(rs.buckets),
        "backward_compiles": rs.backward_compiles,
        "cudagraph_recordings": rs.cudagraph_recordings,
        "instances": len(rs.instances),
        "last_reasons": list(rs.last_reasons),
        "cold_compiles": rs.cold_compiles,
        "compile_seconds_budget": r.compile_seconds_budget,
        "budget_compile_seconds": rs.budget_compile_seconds,
        "first_compiles": dict(rs.first_compiles),
        "first_compile_seconds": dict(rs.first_compile_seconds),
        "served_instances": rs.served,
    }


def _unclaimed_dict(u: dict[str, Any]) -> dict[str, Any]:
    """The `<unclaimed>` entry: a region's keys (what does not apply to compiles outside every region is 0, empty or
    None), its budget under `unclaimed_compile_budget`, and per compiled code name its compiles and recompiles."""
    breached = bool(u["breached"])
    return {
        "compiles": u["compiles"],
        "recompiles": u["recompiles"],
        "graph_breaks": u["graph_breaks"],
        "skipped_frames": 0,
        "ddp_splits": 0,
        "breached": breached,
        "eager_fallback": False,
        "compile_seconds": u["seconds"],
        "budget_recompiles": 0,
        "budget_graph_breaks": 0,
        "recompile_budget": None,
        "graph_break_budget": None,
        "on_breach": u["on_breach"],
        "breaches": ["unclaimed_compile_budget"] if breached else [],
        "fail_armed": breached and u["on_breach"] == "fail",
        "recompile_limit_hits": 0,
        "recompiles_by_reason": {c: u["by_reason"].get(c, 0) for c in CATEGORIES},
        "cache": {c: {"hit": 0, "miss": 0} for c in CACHES},
        "compile_events": u["compiles"],
        "compile_seconds_buckets": [0] * len(BUCKETS),
        "backward_compiles": 0,
        "cudagraph_recordings": 0,
        "instances": 0,
        "last_reasons": [],
        "cold_compiles": 0,
        "compile_seconds_budget": None,
        "budget_compile_seconds": 0.0,
        "served_instances": 0,
        "first_compiles": dict.fromkeys(SOURCES, 0),
        "first_compile_seconds": dict.fromkeys(SOURCES, 0.0),
        "unclaimed_compile_budget": u["budget"],
        "codes": {code: {"compiles": n, "recompiles": r} for code, (n, r) in u["codes"].items()},
    }


def _budget(value: float | None) -> float:
    """A budget as a gauge value: none set is unbounded (+Inf)."""
    return float("inf") if value is None else float(value)


def _first_line(text: str) -> str:
    """A graph-break reason's first line, bounded (the site key; texts can be long)."""
    return text[:200].split("\n", 1)[0].strip()
