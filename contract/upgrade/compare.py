"""Fold the two workers' results into the upgrade report: per region, what the candidate torch adds and removes.

Pure data and logic (no torch import). Every line of the report is a record: a `Side` per interpreter, a
`RegionChange` per region with both runs (`RegionRun`), the findings the candidate adds, removes or changes in
severity, and the `reasons` that make the exit code 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contract.findings import Finding, source_path
from contract.report.render import n_of
from contract.upgrade.drift import Drift

_COMPILE_ID = re.compile(r"^\[?\d+/\d+\]?:? ")
_SITE = re.compile(r"^(.*) at (\S+:\d+)$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_REGION_IN_MESSAGE = re.compile(r"\bregion '([^']+)'")


@dataclass(frozen=True, kw_only=True)
class Break:
    """One distinct graph break: where, and the first line of Dynamo's reason."""

    site: str
    reason: str

    def text(self) -> str:
        """`reason at file:line` (the site relative to the working directory)."""
        return f"{self.reason} at {short_site(self.site)}" if self.site else self.reason


@dataclass(frozen=True, kw_only=True)
class Guard:
    """A failed guard behind recompiles, as a pattern: the values in it folded (`G['CALLS'] == N`), so the same guard
    failing for 7 counter values is one line with `count` 7."""

    pattern: str
    example: str
    site: str
    count: int

    def text(self) -> str:
        """`G['CALLS'] == 0 at model.py:20 (x7)`."""
        where = f" at {self.site}" if self.site else ""
        return f"{self.example}{where}" + (f" (x{self.count})" if self.count > 1 else "")


@dataclass(frozen=True, kw_only=True)
class RegionRun:
    """One region's recorded run under one torch (the worker's numbers, and its budgets by the contract)."""

    compiles: int
    recompiles: int
    graph_breaks: int
    compile_seconds: float
    guard_count: int | None
    instances: int
    breaks: tuple[Break, ...]
    guards: tuple[Guard, ...]
    settled_at: int | None
    budget_recompiles: int
    budget_graph_breaks: int
    recompile_budget: int
    graph_break_budget: int

    def over_budget(self) -> tuple[str, ...]:
        """Budgets this run breaks, each as one line."""
        out = []
        if self.budget_recompiles > self.recompile_budget:
            out.append(
                f"{n_of(self.budget_recompiles, 'recompile')} after warm-up > recompile_budget {self.recompile_budget}"
            )
        if self.budget_graph_breaks > self.graph_break_budget:
            out.append(
                f"{n_of(self.budget_graph_breaks, 'graph-break site')} > graph_break_budget {self.graph_break_budget}"
            )
        return tuple(out)


@dataclass(frozen=True, kw_only=True)
class ColdStart:
    """The predicted first start of a side: cold or warm, what compiling cold costs, and why."""

    cold: bool
    seconds: float | None
    why: str


@dataclass(frozen=True, kw_only=True)
class RegionChange:
    """One region under both torches, and what the candidate changes."""

    name: str
    current: RegionRun | None
    candidate: RegionRun | None
    breaks_added: tuple[Break, ...] = ()
    breaks_removed: tuple[Break, ...] = ()
    recompiles_added: tuple[Guard, ...] = ()
    recompiles_removed: tuple[Guard, ...] = ()
    findings_added: tuple[Finding, ...] = ()
    findings_removed: tuple[Finding, ...] = ()
    findings_changed: tuple[tuple[Finding, Finding], ...] = ()
    """(current, candidate) of a finding whose severity the candidate changes."""
    cold_start: tuple[ColdStart | None, ColdStart | None] = (None, None)
    """(current, candidate) predicted first start."""

    @property
    def seconds_ratio(self) -> float | None:
        """Candidate compile seconds / current compile seconds (None when either did not compile)."""
        if self.current is None or self.candidate is None or self.current.compile_seconds <= 0:
            return None
        return self.candidate.compile_seconds / self.current.compile_seconds

    @property
    def over_budget(self) -> tuple[str, ...]:
        """The budgets the candidate's run breaks."""
        return self.candidate.over_budget() if self.candidate else ()


@dataclass(frozen=True, kw_only=True)
class Side:
    """One interpreter's identity and its whole-contract results."""

    torch: str
    torch_dist: str
    """The torch distribution's version (package metadata: what the warm manifest records)."""
    python: str
    executable: str
    project: str
    step: str | None
    steps: int | None
    record_error: str | None
    findings: tuple[Finding, ...]


@dataclass(frozen=True, kw_only=True)
class Report:
    """The upgrade report: both sides, per region changes, findings added / removed / changed, output drift."""

    contract: str
    current: Side
    candidate: Side
    regions: tuple[RegionChange, ...]
    findings_added: tuple[Finding, ...]
    findings_removed: tuple[Finding, ...]
    findings_changed: tuple[tuple[Finding, Finding], ...]
    drift: Drift
    reasons: tuple[str, ...] = field(default=())
    """Why the candidate fails the upgrade (exit 1); empty: it passes."""

    @property
    def exit_code(self) -> int:
        """1 when the candidate adds an error finding, breaks a budget or cannot run the step; else 0."""
        return 1 if self.reasons else 0


def side(result: Mapping[str, Any]) -> Side:
    """A worker's result as a `Side`."""
    return Side(
        torch=str(result["torch"]),
        torch_dist=str(result.get("torch_dist") or result["torch"]),
        python=str(result.get("python", "")),
        executable=str(result.get("executable", "")),
        project=str(result.get("project", "")),
        step=result.get("step"),
        steps=result.get("steps"),
        record_error=result.get("record_error"),
        findings=tuple(Finding(**f) for f in result.get("findings", [])),
    )


def region_runs(result: Mapping[str, Any]) -> dict[str, RegionRun]:
    """Region name -> its run, from a worker's result."""
    return {r["name"]: _run(r) for r in result.get("regions", [])}


def _run(r: Mapping[str, Any]) -> RegionRun:
    """One region of a worker's result."""
    return RegionRun(
        compiles=int(r["compiles"]),
        recompiles=int(r["recompiles"]),
        graph_breaks=int(r["graph_breaks"]),
        compile_seconds=float(r["compile_seconds"]),
        guard_count=r.get("guard_count"),
        instances=int(r.get("instances", 0)),
        breaks=tuple(Break(site=str(b["site"]), reason=str(b["reason"])) for b in r.get("breaks", [])),
        guards=guard_patterns(r.get("recompile_guards", [])),
        settled_at=r.get("settled_at"),
        budget_recompiles=int(r.get("budget_recompiles", 0)),
        budget_graph_breaks=int(r.get("budget_graph_breaks", 0)),
        recompile_budget=int(r.get("recompile_budget", 0)),
        graph_break_budget=int(r.get("graph_break_budget", 0)),
    )


def guard_patterns(texts: Iterable[str]) -> tuple[Guard, ...]:
    """Recompile guards folded by pattern, in first-seen order: compile ids, Dynamo's source comment and values
    dropped from the key, the site relative to the working directory."""
    found: dict[str, Guard] = {}
    for text in texts:
        core, site = _split_guard(text)
        pattern = _NUMBER.sub("N", core) + "@" + site
        old = found.get(pattern)
        count = old.count + 1 if old else 1
        found[pattern] = Guard(pattern=pattern, example=old.example if old else core, site=site, count=count)
    return tuple(found.values())


def _split_guard(text: str) -> tuple[str, str]:
    """(`G['CALLS'] == 0`, `model.py:20`) from the recorder's `0/0: G['CALLS'] == 0 # CALLS += 1 # ... at F:L`."""
    m = _SITE.match(text)
    core, site = (m.group(1), m.group(2)) if m else (text, "")
    core = _COMPILE_ID.sub("", core).split(" # ")[0].strip()
    return core, short_site(site)


def short_site(site: str) -> str:
    """`/abs/path/model.py:20` -> `model.py:20` relative to the working directory (or its `sys.path` entry)."""
    path, sep, line = site.rpartition(":")
    return f"{source_path(path)}:{line}" if sep and line.isdigit() else site


def diff_findings(
    current: Iterable[Finding], candidate: Iterable[Finding]
) -> tuple[tuple[Finding, ...], tuple[Finding, ...], tuple[tuple[Finding, Finding], ...]]:
    """(added, removed, changed severity): findings are the same when their code and location are (messages name
    versions and counts that differ between torches)."""
    pool: dict[tuple[str, str], list[Finding]] = {}
    for f in current:
        pool.setdefault((f.code, f.location), []).append(f)
    added: list[Finding] = []
    changed: list[tuple[Finding, Finding]] = []
    for f in candidate:
        same = pool.get((f.code, f.location))
        if not same:
            added.append(f)
            continue
        old = same.pop(0)
        if old.severity != f.severity:
            changed.append((old, f))
    removed = [f for group in pool.values() for f in group]
    return tuple(added), tuple(removed), tuple(changed)


def region_of(f: Finding, index: Mapping[str, int], modules: Mapping[str, list[str]]) -> str | None:
    """The region a finding belongs to: its name or `region[i]` key as location, a module it claims, or the one
    region its message names; None for the whole contract."""
    if f.location in index:
        return f.location
    by_index = {i: name for name, i in index.items()}
    m = re.match(r"^region\[(\d+)\]", f.location)
    if m and int(m.group(1)) in by_index:
        return by_index[int(m.group(1))]
    for name, paths in modules.items():
        if any(p and (f.location == p or f.location.startswith(p + ".")) for p in paths):
            return name
    named = set(_REGION_IN_MESSAGE.findall(f.message)) & set(index)
    return named.pop() if len(named) == 1 else None


def region_change(name: str, current: RegionRun | None, candidate: RegionRun | None, **findings: Any) -> RegionChange:
    """One region's change: breaks and recompile guards the candidate adds or removes."""
    cur_b = current.breaks if current else ()
    cand_b = candidate.breaks if candidate else ()
    cur_g = {g.pattern: g for g in (current.guards if current else ())}
    cand_g = {g.pattern: g for g in (candidate.guards if candidate else ())}
    return RegionChange(
        name=name,
        current=current,
        candidate=candidate,
        breaks_added=tuple(b for b in cand_b if b not in cur_b),
        breaks_removed=tuple(b for b in cur_b if b not in cand_b),
        recompiles_added=tuple(g for p, g in cand_g.items() if p not in cur_g),
        recompiles_removed=tuple(g for p, g in cur_g.items() if p not in cand_g),
        **findings,
    )


def reasons(
    report_regions: Iterable[RegionChange], added: Iterable[Finding], changed: Iterable, cand: Side
) -> tuple[str, ...]:
    """Why the candidate fails: a new error finding, a finding that becomes an error, a budget it breaks, a step
    that raises under it."""
    out = [f"adds error {f.code} at {f.location}: {f.message}" for f in added if f.severity == "error"]
    out += [
        f"{new.code} at {new.location} becomes an error: {new.message}"
        for old, new in changed
        if new.severity == "error"
    ]
    for rc in report_regions:
        out += [f"region {rc.name!r}: {line}" for line in rc.over_budget]
    if cand.record_error:
        out.append(f"the step fails under the candidate: {cand.record_error}")
    return tuple(out)


def build(
    contract: str, current: Mapping[str, Any], candidate: Mapping[str, Any], drift: Drift, cold: Any = None
) -> Report:
    """The report from the two workers' results; `cold(name, side, run, candidate)` predicts a first start."""
    cur, cand = side(current), side(candidate)
    added, removed, changed = diff_findings(cur.findings, cand.findings)
    owner = _owner(current, candidate)
    runs = region_runs(current), region_runs(candidate)
    regions = tuple(
        region_change(
            name,
            runs[0].get(name),
            runs[1].get(name),
            findings_added=tuple(f for f in added if owner(f) == name),
            findings_removed=tuple(f for f in removed if owner(f) == name),
            findings_changed=tuple(p for p in changed if owner(p[1]) == name),
            cold_start=(cold(name, cur, runs[0].get(name), False), cold(name, cand, runs[1].get(name), True))
            if cold
            else (None, None),
        )
        for name in dict.fromkeys([*runs[0], *runs[1]])
    )
    return Report(
        contract=contract,
        current=cur,
        candidate=cand,
        regions=regions,
        findings_added=added,
        findings_removed=removed,
        findings_changed=changed,
        drift=drift,
        reasons=reasons(regions, added, changed, cand),
    )


def _owner(current: Mapping[str, Any], candidate: Mapping[str, Any]) -> Any:
    """finding -> the region it belongs to, by both workers' region indexes and claimed modules."""
    index = {**current.get("region_index", {}), **candidate.get("region_index", {})}
    modules = {**current.get("region_modules", {}), **candidate.get("region_modules", {})}
    return lambda f: region_of(f, index, modules)
