"""CC4xx: the dynamic probe's evidence (recompiles, limit hits, graph breaks, late hooks) against each region's budgets.

Runs only when the contract names a `step` (or `--step` is given) and `[probe] enabled`, on the small twin that
`[probe] model` names when there is one (`twin`: CC410/CC411 when it does not cover a region). The counts are the
runtime monitor's own (the probe runs it: `run`), so a region over budget here is one the monitor would breach on the
same run; the events add the detail (which guard, which line, which break). Locations are region names
(`[[allow]] where = "layers"`), except CC405/CC407 (`contract.step`). Messages and fixes name the user's `file:line`
Dynamo gives (full paths).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from compile_formats.reasons import SIZE_GUARD, brief
from contract.checks.context import CheckContext
from contract.checks.probe import twin
from contract.checks.probe.rules import (
    COMPILE_FAILED,
    GENERALIZED,
    GRAPH_BREAKS,
    LATE_HOOK,
    LIMIT_HIT,
    NEVER_COMPILED,
    PER_INSTANCE,
    PROBE_FAILED,
    RECOMPILES,
)
from contract.document.load import Contract
from contract.findings import Finding

GROWING = 3
"""Instances compiling one frame on guards that do not name the instance, from which the compiles are taken to grow
with the instances (CC408; two can be one input that differs once: the first layer's input lacks grad)."""

if TYPE_CHECKING:  # run imports torch; `doctor` imports this module without it
    from contract.checks.probe.run import ProbeResult
    from contract.observe import Event


def check(ctx: CheckContext) -> list[Finding]:
    """Run the probe when a step is given and `[probe] enabled` (on the twin when one is named), and judge its
    evidence against the budgets."""
    found = twin.findings(ctx)
    result = observed(ctx)
    return found if result is None else found + judge(ctx.contract, result)


def observed(ctx: CheckContext) -> ProbeResult | None:
    """The probe's run on this context, run once (the scan weighs it too); None when no step, the probe is off, or
    there is no model it can run (a twin that failed to build, a real model on meta without a twin)."""
    probe_spec = ctx.contract.probe
    if ctx.step is None or ctx.binding is None or not probe_spec.enabled:
        return None
    if "probe" not in ctx.evidence:
        model = twin.probe_model(ctx)
        if model is None or twin.on_meta(model):
            ctx.evidence["probe"] = None
            return None
        from contract.checks.probe.run import probe

        steps, backend = probe_spec.steps, probe_spec.backend
        ctx.evidence["probe"] = probe(ctx.contract, model, ctx.step, steps=steps, backend=backend)
    return ctx.evidence["probe"]


def stable_regions(result: ProbeResult | None) -> set[str]:
    """Regions the probe saw compile and then run every later step without one recompile or limit hit: a scan's
    certain recompile prediction there is refuted on this torch (Dynamo did not guard on it)."""
    if result is None or result.error or result.steps < 2:
        return set()
    compiled = {e.fields["region"] for e in result.named("compile")}
    unsettled = {e.fields["region"] for e in (*result.named("recompile"), *result.named("recompile_limit_hit"))}
    return compiled - unsettled


def judge(contract: Contract, result: ProbeResult) -> list[Finding]:
    """Findings from a probe result: recompiles, limit hits and breaks over budget, late hooks, a failing step."""
    regions = {r.name: r for r in contract.regions}
    return [
        *_recompiles(regions, result),
        *_limit_hits(result),
        *_per_instance(result),
        *_breaks(regions, result),
        *_late_hooks(result),
        *_never_compiled(result),
        *_failure(result),
    ]


def _recompiles(regions: dict[str, Any], result: ProbeResult) -> list[Finding]:
    """The monitor's counted recompiles of each region's worst instance against the budget.

    A counted recompile is *generalizing* when the guard that failed is one Dynamo answers by making the value
    dynamic (a size under `dynamic = "auto"`, a float) and its frame compiled nothing more in at least one later step.
    The region is CC401 when its non-generalizing recompiles alone exceed the budget, CC406 when only the
    generalizing ones take it over.
    """
    out = []
    for region, (hard, soft) in _tally(result).items():
        spec, total = regions[region], result.regions[region]["budget_recompiles"]
        if len(hard) > spec.recompile_budget:
            out.append(_hard(region, spec, hard, result.steps))
        elif total > spec.recompile_budget:
            out.append(_soft(region, spec, soft, total, result.steps))
    return out


def _tally(result: ProbeResult) -> dict[str, tuple[list[Event], list[Event]]]:
    """Per region: (non-generalizing, generalizing-and-stable) counted recompiles of its instance with the most."""
    counted: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for e in result.named("recompile"):
        if e.fields.get("counted"):
            counted[(e.fields["region"], e.fields["module"])].append(e)
    last = _last_compile_steps(result)
    out: dict[str, tuple[list[Event], list[Event]]] = {}
    for (region, module), events in counted.items():
        stable = [
            e for e in events if e.fields.get("generalizing") and last[(region, module, _frame(e))] < result.steps - 1
        ]
        hard = [e for e in events if e not in stable]
        best_hard, best_soft = out.get(region, ([], []))
        out[region] = (max(best_hard, hard, key=len), max(best_soft, stable, key=len))
    return out


def _last_compile_steps(result: ProbeResult) -> dict[tuple[str, str, str], int]:
    """(region, module, frame) -> the last probe step in which that frame compiled."""
    last: dict[tuple[str, str, str], int] = {}
    for e in result.named("compile"):
        last[(e.fields["region"], e.fields["module"], _frame(e))] = e.step
    return last


def _frame(e: Event) -> str:
    return str(e.fields.get("compile_id", "")).rpartition("/")[0]


def _hard(region: str, spec: Any, hard: list[Event], steps: int) -> Finding:
    """CC401: recompiles that are not Dynamo generalizing a size or a float exceed the budget."""
    first = hard[0].fields
    unproven = all(e.fields.get("generalizing") and e.step == steps - 1 for e in hard)
    note = (
        " (Dynamo may have made it dynamic, but the probe ended before showing the region stable: raise [probe] steps)"
        if unproven
        else ""
    )
    return RECOMPILES.finding(
        region,
        f"region {region!r} recompiled {_times(len(hard))} in {steps} probe steps "
        f"(budget {spec.recompile_budget}); guard failed: {brief(first.get('guard', ''))}{note}",
        f"remove the changing state{_at(first)} (see CC301-CC309), or raise recompile_budget if expected",
    )


def _soft(region: str, spec: Any, soft: list[Event], total: int, steps: int) -> Finding:
    """CC406: only recompiles that made a changed size or float dynamic, stable afterwards, exceed the budget."""
    first = soft[0].fields if soft else {}
    sizes = {bool(SIZE_GUARD.search(e.fields.get("guard", ""))) for e in soft}
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
        f"{brief(first.get('guard', ''))}",
        f"{fix}{_at(first)}, or set warmup_compiles = {spec.warmup_compiles + total}",
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _at(fields: dict[str, Any]) -> str:
    """` at file:line` of the user code an event names, or ""."""
    return f" at {fields['site']}" if fields.get("site") else ""


def _limit_hits(result: ProbeResult) -> list[Finding]:
    """CC402, once per region: Dynamo refused to compile a frame again, which now runs eager for new inputs."""
    out = []
    seen: set[str] = set()
    for e in result.named("recompile_limit_hit"):
        region = e.fields["region"]
        if region in seen:
            continue
        seen.add(region)
        out.append(
            LIMIT_HIT.finding(
                region,
                f"region {region!r} hit the recompile limit and now runs eager: "
                f"{brief(e.fields.get('last_reason', ''), 300)}",
                f"remove the state that changes every call{_at(e.fields)}",
            )
        )
    return out


def _per_instance(result: ProbeResult) -> list[Finding]:
    """CC408, once per region: instances of one structure each compiled their shared entry frame (each instance's
    first compile was of the same Dynamo frame) because of the instance itself, so no graph is reused across them.

    The guard Dynamo gives for compiling the frame again decides: one that names the instance (`self.idx == 1`, an id
    or type match on it, its parameter's shape) is per-instance state; one about an input (the first layer's input
    alone lacks grad) is one more graph the other instances share, unless the compiles keep growing with the instances
    (a third instance compiled too). Instances of different structures (DeepSeek's dense and MoE layers) compile apart
    by design; a resume frame after a graph break that recompiles for the values it is handed is not this (CC401/CC406
    judge it); a region that hit the recompile limit is CC402 already."""
    first: dict[tuple[str, str], Event] = {}  # (region, instance) -> its first compile: of its entry frame
    for e in result.named("compile"):
        first.setdefault((e.fields["region"], e.fields["module"]), e)
    compiled_by: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
    for (region, module), e in first.items():
        compiled_by[(region, _frame(e), result.structure.get(module, module))].append(e)
    limited = {e.fields["region"] for e in result.named("recompile_limit_hit")}
    out: list[Finding] = []
    for (region, frame, _), events in compiled_by.items():
        if region in limited or any(f.location == region for f in out):
            continue
        named = next((e.fields for e in events if e.fields.get("instance_guard")), None)
        if len(events) < 2 or (named is None and len(events) < GROWING):
            continue
        modules = sorted(e.fields["module"] for e in events)
        why = f"; guard failed: {brief(named['guard'])}" if named else "; every instance compiled it"
        out.append(
            PER_INSTANCE.finding(
                region,
                f"region {region!r}: {len(modules)} instances each compiled their shared code (Dynamo frame {frame}), "
                f"one graph per instance instead of one for all ({_some(modules)}){why}",
                f"make the per-instance value{_guarded_at(named)} a buffer or read it outside forward "
                "(see CC309), or give instances of different shapes regions of their own",
            )
        )
    return out


def _guarded_at(fields: dict[str, Any] | None) -> str:
    """` at file:line` of the user code a compile's guard names, or ""."""
    return f" at {fields['guard_site']}" if fields and fields.get("guard_site") else ""


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _breaks(regions: dict[str, Any], result: ProbeResult) -> list[Finding]:
    """The monitor's distinct graph-break sites of each region's worst instance against the budget.

    Each Dynamo frame compile stops at its first break, so counting per compile could never exceed a budget >= 1;
    the sites an instance ran into over the probe's steps are what its graphs are split by.
    """
    out = []
    listed = _sites_by_region(result)
    for region, stats in result.regions.items():
        count, budget = stats["budget_graph_breaks"], regions[region].graph_break_budget
        if count <= budget:
            continue
        sites = listed.get(region, [])
        more = f"; and {count - 4} more" if count > 4 else ""
        text = f"{count} distinct graph-break site{'' if count == 1 else 's'}"
        out.append(
            GRAPH_BREAKS.finding(
                region,
                f"region {region!r} has {text} in {result.steps} probe steps (budget {budget}): "
                f"{'; '.join(sites[:4])}{more}",
                "remove the construct in the reason at the line given, or raise graph_break_budget",
            )
        )
    return out


def _sites_by_region(result: ProbeResult) -> dict[str, list[str]]:
    """Per region, the distinct break sites of its instance with the most, each as `reason at file:line`."""
    per_instance: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    for e in result.named("graph_break"):
        f = e.fields
        reason = f"frame skipped, runs eager: {f.get('reason', '')}" if f.get("skipped_frame") else f.get("reason", "")
        text = brief(reason, 160) + _at(f)
        per_instance[(f["region"], f.get("module", ""))][text] = None
    out: dict[str, list[str]] = {}
    for (region, _), texts in per_instance.items():
        if len(texts) > len(out.get(region, [])):
            out[region] = list(texts)
    return out


def _late_hooks(result: ProbeResult) -> list[Finding]:
    """CC404: forward or backward hooks registered on a region's modules after it was compiled."""
    out = []
    for region in sorted({r for r, _, _ in result.hooks_added}):
        added = [f"{kinds} to {path}" for r, path, kinds in result.hooks_added if r == region]
        out.append(
            LATE_HOOK.finding(
                region,
                f"{'; '.join(added[:3])} were added after region {region!r} was compiled; the compiled graph "
                "does not call them",
                "register hooks before the contract is applied",
            )
        )
    return out


def _never_compiled(result: ProbeResult) -> list[Finding]:
    """CC409: regions the step calls whose code Dynamo never compiled, with no graph break on record."""
    return [
        NEVER_COMPILED.finding(
            region,
            f"region {region!r} never compiled in {result.steps} probe steps although the step calls it: it runs "
            f"eager, with no compile or graph break on record; {cause}",
            fix,
        )
        for region, (cause, fix) in result.uncompiled.items()
    ]


def _failure(result: ProbeResult) -> list[Finding]:
    """CC407 (error) when compiling a region failed: the engine's first compiled step would fail the same way;
    CC405 (warning) when the user's own step code raised."""
    if not result.error:
        return []
    if result.compile_failed:
        return [
            COMPILE_FAILED.finding(
                "contract.step",
                f"compiling a region failed in the probe: {result.error}",
                "fix what the error names (a custom op needs a fake implementation; a library object updated in "
                "forward must move out of the compiled region), or keep that region eager (enabled = false)",
            )
        ]
    return [
        PROBE_FAILED.finding(
            "contract.step",
            f"probe {result.error} (evidence covers {result.steps} steps)",
            "make the step runnable at startup, or set [probe] enabled = false",
        )
    ]
