"""CC6xx: operators a region's code calls, checked against what tracing needs.

CC601 reads the source of each compiled region's method and of the forwards of the modules under it, finds custom
operators it reaches (`torch.ops.ns.op[.overload]` attribute chains, `torch.library.custom_op` objects named in the
function's globals or held on the module) and checks each has a fake (meta) implementation. Without one, the first
compiled call fails while tracing ("There was no fake impl registered ..."). Source-level: an op on a branch never
taken is still reported, so this is a warning.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from types import FunctionType
from typing import Any

from contract.checks.custom_ops.rules import (
    CUSTOM_OP_NO_FAKE,
)
from contract.findings import Finding, source_path


def check(ctx: Any) -> list[Finding]:
    """CC601 over every enabled region's targets (needs a bound model; nothing without one)."""
    from contract import _torch

    if ctx.binding is None:
        return []
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    parsed: dict[FunctionType, list[tuple[list[str], str]]] = {}
    for rb in ctx.binding.regions.values():
        if not rb.region.enabled:
            continue
        for target in rb.targets:
            for names, where in _ops_reached(target.module, target.method, parsed):
                if (rb.region.name, names[0]) in seen or any(_torch.has_fake_impl(n) for n in names):
                    continue
                seen.add((rb.region.name, names[0]))
                out.append(
                    CUSTOM_OP_NO_FAKE.finding(
                        where,
                        f"region {rb.region.name!r} calls custom op {names[0]} which has no fake implementation",
                        f"register one: @<op>.register_fake (custom_op) or torch.library.register_fake({names[0]!r})",
                    )
                )
    return out


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
