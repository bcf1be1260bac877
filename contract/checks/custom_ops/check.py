"""CC6xx: operators a region's code calls, checked against what tracing needs.

CC601: custom operators (`torch.ops.ns.op[.overload]`, `torch.library.custom_op` objects) a compiled region calls
without a fake (meta) implementation; the first compiled call that reaches one fails while tracing ("There was no
fake impl registered ..."). The hot-path scan (`contract.checks.hotpath`) records each such call it walks: one made
on every compiled call (no undecided test, early exit, possibly empty loop or dormant Python state before it) is an
error, with or without a step; one under a condition the scan cannot decide is a warning. Ops named in the source of
a region's method and of the forwards under it that the scan did not see called are warnings too (source-level: an
op on a branch never taken is still reported).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from types import FunctionType
from typing import Any

from contract.checks.context import CheckContext
from contract.checks.custom_ops.rules import (
    CUSTOM_OP_NO_FAKE,
)
from contract.findings import Finding, source_path


def check(ctx: CheckContext) -> list[Finding]:
    """CC601 over every enabled region's targets (needs a bound model; nothing without one): an error where the hot
    path scan sees the call made on every compiled call, a warning where a condition it cannot decide may skip it."""
    from contract.checks.hotpath.check import scanned

    if ctx.binding is None:
        return []
    calls: dict[tuple[str, str], Any] = {}
    for h in scanned(ctx):
        key = (h.region, h.what)
        if h.kind == "custom-op" and (key not in calls or h.certain and not calls[key].certain):
            calls[key] = h
    out = [_finding(region, op, h.where, _uncertain(h)) for (region, op), h in calls.items()]
    return out + _named_in_source(ctx, set(calls))


def _uncertain(hazard: Any) -> str | None:
    """Why a recorded call may not run on every compiled call (None: it does)."""
    if hazard.certain:
        return None
    return f"reached only once {hazard.guard} changes" if hazard.guard else UNDECIDED


UNDECIDED = "the call sits under a condition the scan cannot decide: it may not run on every call"
NAMED = "named in the region's code, not seen called on every compiled call"


def _named_in_source(ctx: CheckContext, seen: set[tuple[str, str]]) -> list[Finding]:
    """Warnings for the ops named in a region's source that the hot-path scan did not see called (behind Python state
    that is off now, passed on as a function): an op on a branch never taken is still reported."""
    from contract import _torch

    out: list[Finding] = []
    parsed: dict[FunctionType, list[tuple[list[str], str]]] = {}
    for rb in ctx.bound().regions.values():
        if not rb.region.enabled:
            continue
        for target in rb.targets:
            for names, where in _ops_reached(target.module, target.method, parsed):
                if (rb.region.name, names[0]) in seen or any(_torch.has_fake_impl(n) for n in names):
                    continue
                seen.add((rb.region.name, names[0]))
                out.append(_finding(rb.region.name, names[0], where, NAMED))
    return out


def _finding(region: str, op: str, where: str, uncertain: str | None) -> Finding:
    """One CC601 finding: a call made on every compiled call fails the first one (an error); one that may not run
    (`uncertain` says why) is a warning."""
    fix = f"register one: @<op>.register_fake (custom_op) or torch.library.register_fake({op!r})"
    if uncertain is not None:
        message = f"region {region!r} calls custom op {op} which has no fake implementation ({uncertain})"
        return CUSTOM_OP_NO_FAKE.finding(where, message, fix, severity="warning")
    message = (
        f"region {region!r} calls custom op {op} on every compiled call and it has no fake implementation: the first "
        "compiled call fails while tracing (TorchRuntimeError)"
    )
    return CUSTOM_OP_NO_FAKE.finding(where, message, fix)


def _ops_reached(module: Any, method: str, parsed: dict) -> Iterator[tuple[tuple[str, ...], str]]:
    """(overload names, file:line) of each custom-op use in the method and the forwards of modules under it."""
    from contract import _torch

    for owner, name in [(module, method), *((m, "forward") for m in module.modules() if m is not module)]:
        fn = getattr(type(owner), name, None)
        if not isinstance(fn, FunctionType) or fn.__module__.startswith("torch."):
            continue
        if fn not in parsed:
            parsed[fn] = list(_chains_in(fn))
        for chain, where in parsed[fn]:
            names = _torch.op_names(_resolve(chain, fn, owner))
            if names:
                yield names, where


def _chains_in(fn: FunctionType) -> Iterator[tuple[list[str], str]]:
    """Every name/attribute chain in one function's source, with its file:line (parsed once per function)."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return
    path = source_path(inspect.getsourcefile(fn) or fn.__code__.co_filename)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        chain = None if id(node) in inner else _chain(node)
        if (
            chain
            and isinstance(node, ast.expr)
            and (chain[0] == "self" or len(chain) > 1 or chain[0] in fn.__globals__)
        ):
            yield chain, f"{path}:{first + node.lineno - 1}"


def _chain(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ['a', 'b', 'c'] for the outermost node of an attribute chain rooted at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _resolve(chain: list[str], fn: FunctionType, owner: Any) -> Any:
    """Walk a chain through modules and `torch.ops` namespaces only (no properties run); `self.x` reads vars()."""
    import types

    from contract import _torch

    if chain[0] == "self":
        if len(chain) != 2:
            return None
        return vars(owner).get(chain[1])
    obj = fn.__globals__.get(chain[0])
    for attr in chain[1:]:
        if not (isinstance(obj, types.ModuleType) or _torch.is_op_namespace(obj) or _torch.op_names(obj)):
            return None
        try:
            obj = getattr(obj, attr)
        except (AttributeError, RuntimeError):
            return None
    return obj
