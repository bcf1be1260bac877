"""The upgrade report for machines: JSON (a stable, documented shape: docs/topics/upgrade.md) and SARIF (the format `check`
writes, through `contract.report.sarif`: the findings the candidate adds, and the upgrade's own results)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from contract.findings import Finding, Rule
from contract.upgrade.compare import Break, ColdStart, Guard, RegionChange, RegionRun, Report, Side
from contract.upgrade.rules import BREAK_ADDED, BUDGET_BROKEN, RECOMPILE_ADDED, RULES, STEP_FAILS

VERSION = 1
"""`format` of the JSON report; a field is only ever added."""


def render_json(report: Report) -> str:
    """The report as JSON: `current`, `candidate`, `regions`, `findings_added`, `findings_removed`, ..."""
    return json.dumps(
        {
            "format": VERSION,
            "ok": report.exit_code == 0,
            "exit_code": report.exit_code,
            "contract": report.contract,
            "current": _side(report.current),
            "candidate": _side(report.candidate),
            "regions": [_region(rc) for rc in report.regions],
            "findings_added": [_finding(f, report) for f in report.findings_added],
            "findings_removed": [_finding(f, report, removed=True) for f in report.findings_removed],
            "findings_changed": [
                {**_finding(new, report), "severity_before": old.severity} for old, new in report.findings_changed
            ],
            "drift": asdict(report.drift),
            "reasons": list(report.reasons),
        },
        indent=2,
    )


def _side(s: Side) -> dict[str, Any]:
    """`current` / `candidate`: the interpreter, its torch, the step, the finding counts."""
    return {
        "torch": s.torch,
        "python": s.python,
        "executable": s.executable,
        "project": s.project,
        "step": s.step,
        "steps": s.steps,
        "record_error": s.record_error,
        "findings": len(s.findings),
        "errors": sum(f.severity == "error" for f in s.findings),
    }


def _region(rc: RegionChange) -> dict[str, Any]:
    """One region: both runs and what the candidate changes."""
    return {
        "name": rc.name,
        "current": _run(rc.current, rc.cold_start[0]),
        "candidate": _run(rc.candidate, rc.cold_start[1]),
        "compile_seconds_ratio": rc.seconds_ratio,
        "graph_breaks_added": [_break(b) for b in rc.breaks_added],
        "graph_breaks_removed": [_break(b) for b in rc.breaks_removed],
        "recompiles_added": [_guard(g) for g in rc.recompiles_added],
        "recompiles_removed": [_guard(g) for g in rc.recompiles_removed],
        "findings_added": [f.to_dict() for f in rc.findings_added],
        "findings_removed": [f.to_dict() for f in rc.findings_removed],
        "findings_changed": [{**new.to_dict(), "severity_before": old.severity} for old, new in rc.findings_changed],
        "over_budget": list(rc.over_budget),
    }


def _run(run: RegionRun | None, cold: ColdStart | None) -> dict[str, Any] | None:
    """One side's run of a region (null: the region did not run there)."""
    if run is None:
        return None
    return {
        "compiles": run.compiles,
        "recompiles": run.recompiles,
        "graph_breaks": run.graph_breaks,
        "compile_seconds": run.compile_seconds,
        "guard_count": run.guard_count,
        "instances": run.instances,
        "settled_at": run.settled_at,
        "budget_recompiles": run.budget_recompiles,
        "budget_graph_breaks": run.budget_graph_breaks,
        "recompile_budget": run.recompile_budget,
        "graph_break_budget": run.graph_break_budget,
        "breaks": [_break(b) for b in run.breaks],
        "recompile_guards": [_guard(g) for g in run.guards],
        "cold_start": asdict(cold) if cold else None,
    }


def _break(b: Break) -> dict[str, str]:
    """A graph break: its site and reason."""
    return {"site": b.site, "reason": b.reason}


def _guard(g: Guard) -> dict[str, Any]:
    """A folded recompile guard: an example, its site, how many recompiles it caused."""
    return {"guard": g.example, "site": g.site, "count": g.count}


def _finding(f: Finding, report: Report, *, removed: bool = False) -> dict[str, Any]:
    """A finding with the region it belongs to (null: the whole contract)."""
    attr = "findings_removed" if removed else "findings_added"
    region = next((rc.name for rc in report.regions if f in getattr(rc, attr)), None)
    return {**f.to_dict(), "region": region}


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0, one run: the findings the candidate adds or turns into errors, and a result per new graph
    break, new recompile guard, broken budget and failing step (rules `upgrade/...`)."""
    from importlib import metadata

    from contract.report.catalog import RULES as CHECK_RULES
    from contract.report.sarif import sarif_log

    findings = [*report.findings_added, *(new for _, new in report.findings_changed), *upgrade_findings(report)]
    rules: tuple[Rule, ...] = (*CHECK_RULES, *RULES)
    return json.dumps(sarif_log(findings, report.contract, rules, metadata.version("torch-compile-contract")), indent=2)


def upgrade_findings(report: Report) -> list[Finding]:
    """The upgrade's own results as findings (the record SARIF and every report are made of)."""
    to = f"torch {report.candidate.torch}"
    out: list[Finding] = []
    for rc in report.regions:
        for b in rc.breaks_added:
            out.append(
                BREAK_ADDED.finding(
                    b.site or rc.name, f"{to} adds a graph break in region '{rc.name}': {b.reason}", _BREAK_FIX
                )
            )
        for g in rc.recompiles_added:
            out.append(
                RECOMPILE_ADDED.finding(
                    g.site or rc.name, f"{to} recompiles region '{rc.name}' on {g.text()}", _GUARD_FIX
                )
            )
        for line in rc.over_budget:
            out.append(BUDGET_BROKEN.finding(rc.name, f"under {to}, region '{rc.name}': {line}", _BUDGET_FIX))
    if report.candidate.record_error:
        out.append(STEP_FAILS.finding("contract.step", f"under {to}: {report.candidate.record_error}", _STEP_FIX))
    return out


_BREAK_FIX = "remove what breaks the graph at that line, or raise graph_break_budget if the break is accepted"
_GUARD_FIX = "remove the changing state the guard reads (see CC301-CC309), or raise recompile_budget if expected"
_BUDGET_FIX = "fix the cause above before upgrading, or raise the region's budget in the contract"
_STEP_FIX = "make the step run under the candidate torch before upgrading"
