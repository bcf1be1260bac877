"""Reads through state that is unset when the scan runs (`ctx.attn_metadata` is None until the engine's loop sets
it): which fields the hot path reads through it, and whether the declared types say they are all tensors. A
fresh object the loop installs every call recompiles only through its Python fields (vLLM's forward context with a
`max_decode_seq_len: int`), never through tensor fields (`seq_lens: torch.Tensor`), which Dynamo guards by shape.
The same holds for a record the step builds anew and passes to a compiled call (`changing_fields`,
`parameter_fields`)."""

from __future__ import annotations

import ast
import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

import torch

from contract.checks.hotpath.source import loop_item


def fields_read(body: ast.AST, node: ast.expr) -> set[str] | None:
    """Attribute names the function reads on the value of `node`: `node.f` directly, or `x.f` where `x = node` is a
    local assigned once; None when the value is used any other way (passed on, returned, stored)."""
    nodes = list(ast.walk(body))
    direct = {p.attr for p in nodes if isinstance(p, ast.Attribute) and p.value is node}
    assigns = [p for p in nodes if isinstance(p, ast.Assign) and p.value is node]
    if not assigns:
        return direct or None
    target = assigns[0].targets[0] if len(assigns[0].targets) == 1 else None
    if not isinstance(target, ast.Name):
        return None
    names = [n for n in nodes if isinstance(n, ast.Name) and n.id == target.id]
    if sum(isinstance(n.ctx, ast.Store) for n in names) != 1:
        return None
    uses = {id(n) for n in names if isinstance(n.ctx, ast.Load)}
    reads = [p for p in nodes if isinstance(p, ast.Attribute) and id(p.value) in uses]
    return direct | {p.attr for p in reads} if len(reads) == len(uses) else None


def tensor_fields_only(owner: Any, name: str, fields: set[str] | None) -> bool:
    """The owner's class declares `name` as (Optional) class C and C declares every field in `fields` a tensor."""
    if not fields:
        return False
    owner_class: Any = type(owner)
    declared = _class_of(hints(owner_class).get(name))
    if declared is None:
        return False
    declared_fields = hints(declared)
    return all(tensor_hint(declared_fields.get(f)) for f in fields)


@functools.lru_cache(maxsize=1024)
def hints(obj: Any) -> dict[str, Any]:
    """A class's or function's evaluated annotations; empty when they cannot be evaluated (a bad forward ref)."""
    try:
        return typing.get_type_hints(obj)
    except Exception:  # get_type_hints evaluates user strings: any error means "unknown"
        return {}


def _members(hint: Any) -> tuple[Any, ...]:
    """`Optional[X]` / `X | None` -> (X,); anything else -> (hint,)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(hint) if a is not type(None))
    return (hint,)


def _class_of(hint: Any) -> type | None:
    """The one user class an (Optional) annotation names, else None."""
    members = _members(hint) if hint is not None else ()
    if len(members) == 1 and isinstance(members[0], type) and members[0].__module__ != "builtins":
        return members[0]
    return None


def tensor_hint(hint: Any) -> bool:
    """`torch.Tensor`, a subclass, or an Optional/Union of them."""
    members = _members(hint) if hint is not None else ()
    return bool(members) and all(isinstance(m, type) and issubclass(m, torch.Tensor) for m in members)


SCALARS = (int, float, str, bool)


def changing_fields(cls: type, call: ast.Call, moves: Callable[[ast.expr], bool]) -> set[str]:
    """Fields declared `int`/`float`/`str`/`bool` that a constructor call fills with a value that changes between
    calls (`Meta(seq_lens, max_decode_seq_len=5 + i)`): positional arguments by declaration order."""
    declared = hints(cls)
    return {f for f, expr in _given(cls, call).items() if _scalar_hint(declared.get(f)) and moves(expr)}


def constant_fields(cls: type, call: ast.Call) -> dict[str, Any]:
    """The Python fields a constructor call fills with a literal (`Batch("prefill", 8)`: phase and size)."""
    declared = hints(cls)
    given = _given(cls, call).items()
    return {f: e.value for f, e in given if _scalar_hint(declared.get(f)) and isinstance(e, ast.Constant)}


def _given(cls: type, call: ast.Call) -> dict[str, ast.expr]:
    """Field name -> the expression a constructor call gives it (positional arguments by declaration order)."""
    names = list(hints(cls))
    given = {names[n]: a for n, a in enumerate(call.args) if n < len(names) and not isinstance(a, ast.Starred)}
    given.update({k.arg: k.value for k in call.keywords if k.arg})
    return given


def declared_scalar(fn: Any, position: int | None, keyword: str | None) -> bool:
    """A method's parameter (`self` skipped) that a call fills, declared a Python number, bool or str
    (`def forward(self, x, guidance_scale: float)`): Dynamo specializes on whatever is passed there."""
    try:
        named = dict(list(inspect.signature(fn).parameters.items())[1:])
    except (TypeError, ValueError):
        return False
    filled = positional_parameters(fn)[1:]
    param = (
        named.get(keyword or "")
        if keyword
        else filled[position]
        if position is not None and position < len(filled)
        else None
    )
    return param is not None and _scalar_hint(hints(fn).get(param.name))


def positional_parameters(fn: Any) -> list[inspect.Parameter]:
    """The parameters a positional argument can fill, in order ([] for a callable without a signature)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _scalar_hint(hint: Any) -> bool:
    members = _members(hint) if hint is not None else ()
    return bool(members) and all(isinstance(m, type) and issubclass(m, SCALARS) for m in members)


def parameter_fields(node: ast.AST, position: int | None, keyword: str | None) -> tuple[str, set[str]] | None:
    """The parameter of a method (`self` skipped) a call fills, and the attributes the method's own body reads on it
    (`attn_metadata.max_decode_seq_len`); None when there is no such parameter."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [a.arg for a in node.args.args][1:]
    name = (
        keyword if keyword in params else params[position] if position is not None and position < len(params) else None
    )
    if name is None:
        return None
    return name, attribute_reads(node, name)


def attribute_reads(node: ast.AST, name: str) -> set[str]:
    """The attributes a function body reads on one of its names (`attn_metadata.num_decode_tokens`)."""
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
    }


def passed_to_children(node: ast.AST, name: str) -> list[tuple[str, int | None, str | None]]:
    """Where a method passes one of its names on to a child module, as (the child's attribute on `self`, position,
    keyword): `self.attn(h, meta)`, and `for layer in self.layers: layer(h, meta)` (also under `enumerate`), which
    names the container."""
    loops: dict[str, str] = {}
    for loop in (n for n in ast.walk(node) if isinstance(n, ast.For)):
        source, target = loop_item(loop)
        if isinstance(target, ast.Name) and isinstance(source, ast.Attribute) and _is_name(source.value, "self"):
            loops[target.id] = source.attr
    out: list[tuple[str, int | None, str | None]] = []
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func, child = call.func, None
        if isinstance(func, ast.Attribute) and _is_name(func.value, "self"):
            child = func.attr
        elif isinstance(func, ast.Name):
            child = loops.get(func.id)
        if child is None:
            continue
        out += [(child, n, None) for n, a in enumerate(call.args) if _is_name(a, name)]
        out += [(child, None, k.arg) for k in call.keywords if k.arg and _is_name(k.value, name)]
    return out


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
