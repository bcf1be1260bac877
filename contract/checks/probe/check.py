"""CC4xx: the dynamic probe's evidence (recompiles, limit hits, graph breaks, late hooks) against each region's budgets.

Runs only when the contract names a `step` (or `--step` is given) and `[probe] enabled`. Locations are region names
(`[[allow]] where = "layers"`), except CC405 (`contract.step`). Messages and fixes name the user's `file:line`
Dynamo gives (full paths).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from contract.checks.probe.rules import (
    GENERALIZED,
    GRAPH_BREAKS,
    LATE_HOOK,
    LIMIT_HIT,
    PROBE_FAILED,
    RECOMPILES,
)
from contract.findings import Finding

_SOURCE = re.compile(r"#\s*([^#\n]*?):(\d+) in (\w+)")
_USER_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
_COMPILE_ID = re.compile(r"^\s*\[?\d+/\d+\]?:\s*")
_SIZE = re.compile(r"\bsize mismatch at index \d+\b")
_FLOAT_GUARD = re.compile(
    r"^[^#=]*?[\w\]')]\s*==\s*[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?\s*(?:#.*)?$|"
    r"^[^#=]*?[\w\]')]\s*==\s*[-+]?(?:inf|nan)\s*(?:#.*)?$",
    re.IGNORECASE,
)


def check(ctx: Any) -> list[Finding]:
    """Run the probe when a step is given and `[probe] enabled`, and judge its evidence against the budgets."""
    probe_spec = ctx.contract.probe
    if ctx.step is None or ctx.binding is None or not probe_spec.enabled:
        return []
    from contract.checks.probe.run import probe

    result = probe(ctx.contract, ctx.binding.model, ctx.step, steps=probe_spec.steps, backend=probe_spec.backend)
    return judge(ctx.contract, result)


def judge(contract: Any, result: Any) -> list[Finding]:
    """Findings from a probe result: recompiles, limit hits and breaks over budget, late hooks, step failure."""
    regions = {r.name: r for r in contract.regions}
    out = [*_recompiles(regions, result), *_limit_hits(result), *_breaks(regions, result)]
    for region in sorted({r for r, _ in result.hooks_added}):
        paths = [p for r, p in result.hooks_added if r == region]
        out.append(
            LATE_HOOK.finding(
                region,
                f"forward hooks were added to {', '.join(paths[:3])} after region "
                f"{region!r} was compiled; the compiled graph ignores them",
                "register hooks before the contract is applied",
            )
        )
    if result.error:
        out.append(
            PROBE_FAILED.finding(
                "contract.step",
                f"probe {result.error} (evidence covers {result.steps} steps)",
                "make the step runnable at startup, or set [probe] enabled = false",
            )
        )
    return out


def _recompiles(regions: dict[str, Any], result: Any) -> list[Finding]:
    """Per instance and frame: compiles beyond `warmup_compiles`; the worst instance is compared with the budget.

    A counted recompile is *generalizing* when every guard that failed is one Dynamo answers by making the value
    dynamic (a size under `dynamic = "auto"`, a float) and the frame compiled nothing more in at least one later step.
    The region is CC401 when its non-generalizing recompiles alone exceed the budget, CC406 when only the
    generalizing ones take it over.
    """
    hard, soft, total = _tally(regions, result)
    out = []
    for region in total:
        budget = regions[region].recompile_budget
        if len(hard[region]) > budget:
            out.append(_hard(region, regions[region], hard[region], result.steps))
        elif total[region] > budget:
            out.append(_soft(region, regions[region], soft[region], total[region], result.steps))
    return out


def _tally(regions: dict[str, Any], result: Any) -> tuple[dict[str, list[Any]], dict[str, list[Any]], dict[str, int]]:
    """Per region, over its instances' frames: the most non-generalizing and generalizing counted recompiles of one
    frame, and the most counted recompiles of one frame."""
    frames: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for c in result.compiles:
        frames[(c.region, c.path, c.compile_id.split("/")[0])].append(c)
    hard: dict[str, list[Any]] = defaultdict(list)
    soft: dict[str, list[Any]] = defaultdict(list)
    total: dict[str, int] = defaultdict(int)
    for (region, _, _), compiles in frames.items():
        spec = regions[region]
        counted = compiles[spec.warmup_compiles :]
        stable = bool(compiles) and compiles[-1].step < result.steps - 1
        benign = [c for c in counted if stable and generalizes(c.reasons, spec.dynamic)]
        rest = [c for c in counted if c not in benign]
        hard[region] = max(hard[region], rest, key=len)
        soft[region] = max(soft[region], benign, key=len)
        total[region] = max(total[region], len(counted))
    return hard, soft, total


def _hard(region: str, spec: Any, hard: list[Any], steps: int) -> Finding:
    """CC401: recompiles that are not Dynamo generalizing a size or a float exceed the budget."""
    reason = next((c.reasons[0] for c in hard if c.reasons), "")
    unproven = all(generalizes(c.reasons, spec.dynamic) and c.step == steps - 1 for c in hard)
    note = (
        " (Dynamo may have made it dynamic, but the probe ended before showing the region stable: raise [probe] steps)"
        if unproven
        else ""
    )
    return RECOMPILES.finding(
        region,
        f"region {region!r} recompiled {_times(len(hard))} in {steps} probe steps "
        f"(budget {spec.recompile_budget}); guard failed: {brief(reason)}{note}",
        f"remove the changing state{at(reason)} (see CC301-CC309), or raise recompile_budget if expected",
    )


def _soft(region: str, spec: Any, soft: list[Any], total: int, steps: int) -> Finding:
    """CC406: only recompiles that made a changed size or float dynamic, stable afterwards, exceed the budget."""
    reason = next((c.reasons[0] for c in soft if c.reasons), "")
    sizes = {bool(_SIZE.search(c.reasons[0])) for c in soft if c.reasons}
    kind = " and ".join(k for k, on in (("size", True in sizes), ("float", False in sizes)) if on)
    fix = " / ".join(
        f
        for f, on in (
            ("declare the dimension dynamic (dynamic_dims or dynamic = true)", True in sizes),
            ("pass the float as a tensor (a buffer updated in place)", False in sizes),
        )
        if on
    )
    return GENERALIZED.finding(
        region,
        f"region {region!r} recompiled {_times(total)} in {steps} probe steps "
        f"(budget {spec.recompile_budget}) only for Dynamo to make a changed {kind} dynamic, "
        f"and was stable after (the runtime monitor still counts it); guard failed: "
        f"{brief(reason)}",
        f"{fix}{at(reason)}, or set warmup_compiles = {spec.warmup_compiles + total}",
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def generalizes(reasons: list[str], dynamic: Any) -> bool:
    """Whether every failed guard of a recompile is one Dynamo generalizes (a size under auto, a float value)."""
    if not reasons:
        return False
    for reason in reasons:
        text = reason.split("\nUser stack trace:")[0]
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            return False
        for part in _COMPILE_ID.sub("", lines[0]).split("; "):
            if _SIZE.search(part) and dynamic == "auto" and "stride" not in part:
                continue
            if _FLOAT_GUARD.match(part.strip()):
                continue
            return False
    return True


def _limit_hits(result: Any) -> list[Finding]:
    out = []
    for region in dict.fromkeys(r for r, _ in result.limit_hits):
        text = next(t for r, t in result.limit_hits if r == region)
        out.append(
            LIMIT_HIT.finding(
                region,
                f"region {region!r} hit the recompile limit and now runs eager: {brief(text, 300)}",
                f"remove the state that changes every call{at(text)}",
            )
        )
    return out


def _breaks(regions: dict[str, Any], result: Any) -> list[Finding]:
    """Distinct graph-break sites (reason's first line + file:line) per region instance over the whole probe.

    Each Dynamo frame compile stops at its first break, so counting per compile could never exceed a budget >= 1;
    the sites an instance ran into over the probe's steps are what its graphs are split by.
    """
    sites: dict[tuple[str, str], dict[tuple[str, str], Any]] = defaultdict(dict)
    for c in result.compiles:
        for b in c.breaks:
            sites[(c.region, c.path)].setdefault(b.site, b)
    worst: dict[str, dict[tuple[str, str], Any]] = {}
    for (region, _), found in sites.items():
        if len(found) > len(worst.get(region, {})):
            worst[region] = found
    out = []
    for region, found in worst.items():
        budget = regions[region].graph_break_budget
        if len(found) > budget:
            listed = "; ".join(_break_text(b) for b in list(found.values())[:4])
            more = f"; and {len(found) - 4} more" if len(found) > 4 else ""
            sites_text = f"{len(found)} distinct graph-break site{'' if len(found) == 1 else 's'}"
            out.append(
                GRAPH_BREAKS.finding(
                    region,
                    f"region {region!r} has {sites_text} in {result.steps} probe "
                    f"steps (budget {budget}): {listed}{more}",
                    "remove the construct in the reason at the line given, or raise graph_break_budget",
                )
            )
    return out


def _break_text(b: Any) -> str:
    """`reason (Dynamo's explanation) at file:line`, short."""
    head, _ = b.site
    explanation = next(
        (line.split(":", 1)[1].strip() for line in b.reason.splitlines() if line.strip().startswith("Explanation:")), ""
    )
    text = f"{head}: {explanation}" if explanation and explanation not in head else head
    if head.startswith("generic_jump"):
        text += " (a tensor's value decides a Python branch)"
    return brief(text, 160) + (f" at {b.location}" if b.location else "")


def brief(reason: str, limit: int = 240) -> str:
    """A guard or break reason on one short line (Dynamo's hints and user stack trace dropped; the shortened path of
    a guard's `# path:line in fn` comment made full where it can be)."""
    text = reason.split("(HINT")[0].split("\nUser stack trace:")[0]
    m = _SOURCE.search(text)
    if m:
        full = _full_path(m.group(1).strip())
        text = text[: m.start(1)] + full + text[m.end(1) :]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def at(reason: str) -> str:
    """` at file:line` of the user code Dynamo's reason names: the innermost `File "...", line N` of its "User stack
    trace" when present (full path), else the `# path:line in fn` comment, whose path Dynamo shortens (made full
    again when exactly one loaded source file ends with it)."""
    trace = reason.split("User stack trace:", 1)
    frames = _USER_FRAME.findall(trace[1]) if len(trace) == 2 else []
    if frames:
        return f" at {frames[-1][0]}:{frames[-1][1]}"
    m = _SOURCE.search(reason)
    return f" at {_full_path(m.group(1).strip())}:{m.group(2)}" if m else ""


def _full_path(short: str) -> str:
    """The loaded source file whose path ends with Dynamo's shortened `short`, when exactly one does."""
    import linecache
    import os
    import sys

    if os.path.isabs(short) or not short:
        return short
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())} | set(linecache.cache)
    # shorten_filename drops torch's common prefix plus one character: "/" normally, the path's first letter when
    # the common prefix is the root ("/tmp/m.py" -> "mp/m.py")
    found = {f for f in files if isinstance(f, str) and (f.endswith("/" + short) or f[2:] == short)}
    return found.pop() if len(found) == 1 else short
