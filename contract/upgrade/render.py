"""The upgrade report for people: text for a terminal, markdown to post on a pull request. Both are made of the
same rows: per region the two runs side by side, then what the candidate adds (`+`) and removes (`-`)."""

from __future__ import annotations

from collections.abc import Callable

from contract.findings import Finding
from contract.report.render import n_of
from contract.upgrade.compare import ColdStart, RegionChange, RegionRun, Report
from contract.upgrade.drift import Drift

Row = tuple[str, str, str, str]
"""(what, current, candidate, note)."""


def rows(rc: RegionChange) -> list[Row]:
    """The region's numbers under both torches."""

    def pair(get: Callable[[RegionRun], object]) -> tuple[str, str]:
        """One number under both torches."""
        return tuple(_value(get(r)) if r else "-" for r in (rc.current, rc.candidate))  # type: ignore[return-value]

    ratio = f"x{rc.seconds_ratio:.2f}" if rc.seconds_ratio is not None else ""
    return [
        ("compiles", *pair(lambda r: r.compiles), ""),
        ("recompiles", *pair(lambda r: r.recompiles), ""),
        ("graph breaks", *pair(lambda r: r.graph_breaks), ""),
        ("compile seconds", *pair(lambda r: round(r.compile_seconds, 2)), ratio),
        ("guards", *pair(lambda r: r.guard_count), ""),
        (
            "first start",
            _cold(rc.cold_start[0]),
            _cold(rc.cold_start[1]),
            rc.cold_start[1].why if rc.cold_start[1] else "",
        ),
    ]


def changes(rc: RegionChange) -> list[str]:
    """What the candidate changes in the region, one `+`/`-` line each."""
    out = [f"+ graph break: {b.text()}" for b in rc.breaks_added]
    out += [f"- graph break: {b.text()}" for b in rc.breaks_removed]
    out += [f"+ recompile: {g.text()}" for g in rc.recompiles_added]
    out += [f"- recompile: {g.text()}" for g in rc.recompiles_removed]
    out += [f"+ {_finding(f)}" for f in rc.findings_added]
    out += [f"- {_finding(f)}" for f in rc.findings_removed]
    out += [_changed(old, new) for old, new in rc.findings_changed]
    out += [f"! over budget: {line}" for line in rc.over_budget]
    return out


def render_text(report: Report) -> str:
    """The terminal report."""
    cur, cand = report.current, report.candidate
    lines = [
        f"compile-contract upgrade: {report.contract}",
        f"  current   torch {cur.torch} ({cur.executable})",
        f"  candidate torch {cand.torch} ({cand.executable})",
        f"  step {cand.step}, {n_of(cand.steps or 0, 'call')} recorded under each",
    ]
    width = max([len(cur.torch), len(cand.torch), 8])
    for rc in report.regions:
        lines += ["", f"region {rc.name}", f"  {'':<16} {cur.torch:>{width}}  {cand.torch:>{width}}"]
        lines += [f"  {w:<16} {a:>{width}}  {b:>{width}}  {n}".rstrip() for w, a, b, n in rows(rc)]
        lines += [f"  {line}" for line in changes(rc)]
    lines += ["", *_contract_lines(report), *_drift_lines(report.drift), "", _verdict(report)]
    lines += [f"  {r}" for r in report.reasons]
    return "\n".join(lines)


def _contract_lines(report: Report) -> list[str]:
    """Findings not tied to a region, and severity changes."""
    inside = {id(f) for rc in report.regions for f in (*rc.findings_added, *rc.findings_removed)}
    inside |= {id(new) for rc in report.regions for _, new in rc.findings_changed}
    out = [f"+ {_finding(f)}" for f in report.findings_added if id(f) not in inside]
    out += [f"- {_finding(f)}" for f in report.findings_removed if id(f) not in inside]
    out += [_changed(old, new) for old, new in report.findings_changed if id(new) not in inside]
    if report.candidate.record_error:
        out.append(f"! the step fails under the candidate: {report.candidate.record_error}")
    return (["contract:", *[f"  {line}" for line in out]] if out else ["contract: no finding added or removed"]) + [""]


def _drift_lines(drift: Drift) -> list[str]:
    """The step's outputs: how far the candidate's are from the current ones."""
    if not drift.compared and not drift.changes:
        return [f"outputs: not compared ({drift.note or 'none'})"]
    head = f"outputs: {n_of(drift.compared, 'tensor')} compared"
    if drift.max_abs is not None:
        head += f", max abs diff {drift.max_abs:.3g}, max rel diff {drift.max_rel:.3g}"
    out = [head]
    for c in drift.changes:
        nums = f" max abs {c.max_abs:.3g}, rel {c.max_rel:.3g}" if c.change == "values" else ""
        out.append(f"  {c.name}: {c.change} {c.current} -> {c.candidate}{nums}")
    return out


def _verdict(report: Report) -> str:
    """The last line: passes or FAILS, with the exit code."""
    if report.exit_code == 0:
        return f"upgrade to torch {report.candidate.torch}: passes the contract (exit 0)"
    return f"upgrade to torch {report.candidate.torch}: FAILS the contract (exit 1):"


def render_markdown(report: Report) -> str:
    """A pull-request comment: verdict first, a table of regions, then the changes in a collapsed block."""
    cur, cand = report.current, report.candidate
    verdict = "passes the contract" if report.exit_code == 0 else "**fails the contract**"
    lines = [
        f"### compile-contract upgrade: torch `{cur.torch}` → `{cand.torch}`",
        "",
        f"`{report.contract}`, step `{cand.step}` ({n_of(cand.steps or 0, 'call')} under each): {verdict}",
    ]
    lines += [f"- {_md(r)}" for r in report.reasons]
    lines += [
        "",
        "| region | compiles | recompiles | graph breaks | compile s | guards | first start |",
        "|---|---|---|---|---|---|---|",
    ]
    for rc in report.regions:
        cells = [f"{a} → {b}" + (f" ({n})" if n and w == "compile seconds" else "") for w, a, b, n in rows(rc)]
        lines.append(f"| `{rc.name}` | " + " | ".join(cells) + " |")
    details = [f"- `{rc.name}`: {_md(line)}" for rc in report.regions for line in changes(rc)]
    details += [f"- {_md(line.strip())}" for line in _contract_lines(report)[1:] if line.strip()]
    details += [f"- {_md(line.strip())}" for line in _drift_lines(report.drift)]
    lines += ["", "<details><summary>What changes</summary>", "", *details, "", "</details>"]
    return "\n".join(lines)


def _md(text: str) -> str:
    """A report line in markdown: pipes and angle brackets escaped, so a guard or a reason cannot break the page."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _finding(f: Finding) -> str:
    """`CODE (severity) at LOCATION: message`."""
    tag = "error" if f.severity == "error" else "warning"
    return f"{f.code} ({tag}) at {f.location}: {f.message}"


def _changed(old: Finding, new: Finding) -> str:
    """A finding whose severity the candidate changes."""
    return f"~ {new.code} at {new.location}: {old.severity} -> {new.severity}: {new.message}"


def _cold(cold: ColdStart | None) -> str:
    """`warm, ~12.0 s`, `cold, ~12.0 s` or `-` (not predicted)."""
    if cold is None:
        return "-"
    cost = f", ~{cold.seconds:.1f} s" if cold.seconds is not None else ""
    return f"{'cold' if cold.cold else 'warm'}{cost}"


def _value(value: object) -> str:
    """A number of the table, `-` when unknown."""
    return "-" if value is None else str(value)
