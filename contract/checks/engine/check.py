"""CC901-CC905: the compiles the engine made before `enforce`, read back from the model and held against the regions.

Runs on the bound model before anything is applied, so every compile found is the engine's (or the user's). Findings
are grouped per region and kind: one line names the first module path and how many more share it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contract.checks.context import CheckContext
from contract.checks.engine.rules import COMPILED_TWICE, INLINED, NOT_COMPILED, SETTINGS_DIFFER, UNREADABLE
from contract.document.schema import Region
from contract.findings import Finding

if TYPE_CHECKING:  # the binding imports torch; `doctor` imports the checks without it
    from contract.binding.targets import Binding, RegionBinding, Target


@dataclass
class _Group:
    """Targets of one region that share one finding (same kind, same values)."""

    paths: list[str] = field(default_factory=list)
    detail: str = ""


def check(ctx: CheckContext) -> list[Finding]:
    """Every CC9xx finding of the bound model (nothing without one)."""
    if ctx.binding is None:
        return []
    from contract.binding.apply import engine_compiles

    binding: Binding = ctx.binding
    found = engine_compiles(binding.model)
    if not found and not any(rb.region.engine for rb in binding.regions.values()):
        return []
    outer = [c for key, c in found.items() if key not in binding.by_target]  # region inside region: CC504
    out: list[Finding] = _inlined(binding, outer)
    for rb in binding.regions.values():
        if rb.region.enabled:
            out += _verify(rb, found) if rb.region.engine else _twice(rb, found)
    return out


def _verify(rb: RegionBinding, found: dict) -> list[Finding]:
    """CC901 (not compiled), CC902 (compiled differently), CC905 (unreadable) for one engine region."""
    from contract import _compiled

    region = rb.region
    want = _compiled.expected_for(region)
    missing, unreadable, differ = _Group(), _Group(), dict[str, _Group]()
    for target in rb.targets:
        comp = found.get((id(target.module), target.method))
        if comp is None:
            if region.verify_at == "start":
                (unreadable if _replaced(target) else missing).paths.append(_where(target))
        elif comp.settings is None or want is None:
            unreadable.paths.append(_where(target))
        else:
            diff = "; ".join(want.differences(comp.settings))
            if diff:
                differ.setdefault(diff, _Group(detail=diff)).paths.append(_where(target))
    out = []
    if missing.paths:
        out.append(NOT_COMPILED.finding(region.loc("compiled_by"), _not_compiled(region, missing), _fix_missing()))
    for group in differ.values():
        out.append(SETTINGS_DIFFER.finding(region.loc("compiled_by"), _differs(region, group), _fix_differ()))
    if unreadable.paths:
        out.append(UNREADABLE.finding(region.loc("verify_at"), _unreadable(region, unreadable), _fix_unreadable()))
    return out


def _replaced(target: Target) -> bool:
    """The method is replaced on the instance by something that is not torch's compile wrapper (it may compile
    inside, or not: the start cannot tell)."""
    own = target.module.__dict__
    if target.method == "forward" and own.get("_compiled_call_impl") is not None:
        return True
    return callable(own.get(target.method))


def _twice(rb: RegionBinding, found: dict) -> list[Finding]:
    """CC904: a contract region whose module method the engine already compiled."""
    group = _Group()
    for target in rb.targets:
        comp = found.get((id(target.module), target.method))
        if comp is not None:
            group.paths.append(f"{_where(target)} ({_how(comp)})")
    if not group.paths:
        return []
    region = rb.region
    return [
        COMPILED_TWICE.finding(
            region.loc("compiled_by"),
            f"region {region.name!r} is compiled by the contract, but the engine already compiled "
            f"{_listed(group.paths)}",
            'set compiled_by = "engine" on the region (the contract then verifies the engine\'s settings), '
            "or stop the engine's compile",
        )
    ]


def _inlined(binding: Binding, compiles: Iterable[Any]) -> list[Finding]:
    """CC903: region targets that lie inside the module of some compile (they are traced into its graph)."""
    outer = [(c, {id(m) for m in c.module.modules()} - {id(c.module)}) for c in compiles]
    if not outer:
        return []
    paths = {id(m): p for p, _, m in _paths(binding)}
    out: list[Finding] = []
    for rb in binding.regions.values():
        if not rb.region.enabled:
            continue
        hit = next(((c, t) for t in rb.targets for c, inner in outer if id(t.module) in inner), None)
        if hit is None:
            continue
        comp, target = hit
        where = f"{paths.get(id(comp.module), '?') or '<root>'}.{comp.method}"
        out.append(
            INLINED.finding(
                rb.region.loc("module"),
                f"region {rb.region.name!r} ({_where(target)}) lies inside the compile of {where} "
                f"({_how(comp)}): Dynamo traces it into that graph, so the region never compiles on its own",
                f'declare the region where the engine compiles (module = "{paths.get(id(comp.module), "")}" with '
                'compiled_by = "engine"), or stop the outer compile',
            )
        )
    return out


def _paths(binding: Binding) -> list[tuple[str, str, Any]]:
    from contract.binding.resolve import claimable_modules

    return claimable_modules(binding.model)


def _how(comp: Any) -> str:
    """How a compile was made, as the user wrote it."""
    name = type(comp.module).__name__
    return {
        "wrapper": f"torch.compile({name})",
        "compile": f"{name}.compile()",
        "method": f"torch.compile({name}.{comp.attr})",
    }.get(comp.kind, comp.kind)


def _where(target: Target) -> str:
    return f"{target.path or '<root>'}.{target.method}"


def _listed(paths: list[str]) -> str:
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return f"{paths[0]}{more}"


def _not_compiled(region: Region, group: _Group) -> str:
    return (
        f"region {region.name!r} is compiled by the engine, but nothing compiled {_listed(group.paths)}: "
        "it runs eager and the region's budgets watch nothing"
    )


def _fix_missing() -> str:
    return (
        "call enforce after the engine compiled the model (or use contract.integrations), turn the engine's compile "
        'on, set compiled_by = "contract", or verify_at = "first_compile" for an engine that compiles lazily'
    )


def _differs(region: Region, group: _Group) -> str:
    return f"region {region.name!r}: the engine compiled {_listed(group.paths)} with {group.detail}"


def _fix_differ() -> str:
    return "compile with the contract's settings in the engine, or write the engine's settings into the region"


def _unreadable(region: Region, group: _Group) -> str:
    return (
        f"region {region.name!r}: {_listed(group.paths)} is compiled through an object torch does not document, "
        "so its settings cannot be read at start"
    )


def _fix_unreadable() -> str:
    return 'set verify_at = "first_compile": the monitor reads the settings from the compile itself'
