"""Which values change between calls: the step's `i` (and what is computed from it), a compiled method's arguments,
clocks and random draws. `change` says whether an expression is certain to change on every call (`i`, `i + 1`,
`i % 2 == 0`, `not flag`) or only may (`i // 100`, `schedule(i)`), and how many distinct values it can take;
`step_arguments` is what the step passes a compiled call that stays the same from call to call."""

from __future__ import annotations

import ast
import random
import time
import types
from dataclasses import dataclass
from typing import Any, TypeGuard

import torch
from torch import nn

from contract.checks.hotpath.model import MISSING
from contract.checks.hotpath.resolve import CallArgs, Display, Env, resolve
from contract.checks.hotpath.source import parse_source

LEVELS = ("", "some", "every")
"""Taint levels, weakest first: unchanged, may change between calls, changes on every call."""


@dataclass(frozen=True)
class Change:
    """How an expression's value moves between calls."""

    certain: bool
    """True when it differs from one call to the next (a counter, `i % 2 == 0`)."""
    distinct: int | None = None
    """How many values it cycles through (None: unbounded)."""


_CHANGING: dict[int, str] = {}


def changing_calls() -> dict[int, str]:
    """Callables whose result differs per call (clocks, random draws, `next`), by identity."""
    if not _CHANGING:
        fns: list[Any] = [time.time, time.perf_counter, time.monotonic, time.time_ns, next]
        fns += [getattr(random, n) for n in ("random", "randint", "uniform", "choice", "gauss", "randrange", "sample")]
        _CHANGING.update({id(f): getattr(f, "__name__", "") for f in fns})
    return _CHANGING


def stronger(a: str, b: str) -> str:
    """The stronger of two taint levels."""
    return a if LEVELS.index(a) >= LEVELS.index(b) else b


def taint_of(env: Env, node: ast.expr | None) -> str:
    """`every`, `some` or `` for an expression, from the taint of the names and calls it reads."""
    if node is None:
        return ""
    found = change(env, node)
    return "" if found is None else "every" if found.certain else "some"


def change(env: Env, node: ast.expr) -> Change | None:
    """How an expression changes between calls (None: it does not, as far as the scan can tell)."""
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Name):
        level = env.taint.get(node.id, "") or _advanced(env, node)
        return Change(level == "every") if level else None
    if isinstance(node, ast.Attribute) and env.changing:
        level = _advanced(env, node)
        if level:
            return Change(level == "every")
    if isinstance(node, ast.BinOp):
        return _binop(env, node)
    if isinstance(node, ast.UnaryOp):
        inner = change(env, node.operand)
        return Change(inner.certain, 2) if inner and isinstance(node.op, ast.Not) else inner
    if isinstance(node, ast.Compare):
        return _compare(env, node)
    if isinstance(node, ast.JoinedStr):
        parts = [change(env, v.value) for v in node.values if isinstance(v, ast.FormattedValue)]
        return _any(parts, certain=any(p and p.certain for p in parts))
    if isinstance(node, ast.Subscript):
        index = change(env, node.slice)
        container = sequence_of(env, node.value)
        values = _distinct(container)
        if index and index.certain and values > 1:
            return Change(True, min(index.distinct or len(container), values))
        return _any([index, change(env, node.value)])
    if isinstance(node, ast.Call):
        return _call(env, node)
    if isinstance(node, ast.IfExp):
        return _ifexp(env, node)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):  # what it iterates over
        return _any([change(env, g.iter) for g in node.generators])
    return _any([change(env, c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)])


def sequence_of(env: Env, node: ast.expr) -> Any:
    """The real object an expression names, or the value of a literal of constants (`(1.0, 1.5, 7.5)`)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        try:
            return ast.literal_eval(node)
        except ValueError:
            return MISSING
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):  # `sizes[::-1]`
        whole, bounds = sequence_of(env, node.value), _literal_bounds(node.slice)
        return whole[slice(*bounds)] if isinstance(whole, (tuple, list)) and bounds is not None else MISSING
    return resolve(env, node)


def _literal_bounds(index: ast.Slice) -> list[int | None] | None:
    """A slice's bounds when each is an int literal or absent (None otherwise)."""
    out: list[int | None] = []
    for part in (index.lower, index.upper, index.step):
        try:
            value = None if part is None else ast.literal_eval(part)
        except ValueError:
            return None
        if value is not None and type(value) is not int:
            return None
        out.append(value)
    return out


def _distinct(container: Any) -> int:
    """How many different items a str/tuple/list holds (0 for anything else)."""
    if not isinstance(container, (str, tuple, list)):
        return 0
    return len({repr(item) for item in container})


def _advanced(env: Env, node: ast.Name | ast.Attribute) -> str:
    """The taint of state the loop walk saw advance (`self.global_step += 1` earlier in the step), read back here."""
    if not env.changing:
        return ""
    if isinstance(node, ast.Name):
        if node.id in env.local or node.id not in env.fn.__globals__:
            return ""
        return env.changing.get((id(env.fn.__globals__), node.id), "")
    parent = resolve(env, node.value)
    return "" if parent is MISSING else env.changing.get((id(parent), node.attr), "")


def _any(parts: list[Change | None], certain: bool = False) -> Change | None:
    """Some part changes: the whole may change (certain only when the caller says so)."""
    return Change(certain) if any(p is not None for p in parts) else None


def _binop(env: Env, node: ast.BinOp) -> Change | None:
    """`i + k`, `k * i` change every call; `i % k` cycles through k values; others may change."""
    left, right = change(env, node.left), change(env, node.right)
    if left is None and right is None:
        return None
    moving, other, other_node = (left, right, node.right) if left is not None else (right, left, node.left)
    assert moving is not None
    if isinstance(node.op, (ast.Add, ast.Sub)) and other is None and moving.certain:
        return Change(True, moving.distinct)
    if isinstance(node.op, ast.Mult) and moving.certain and _nonzero_constant(other_node):
        return Change(True, moving.distinct)
    if isinstance(node.op, ast.Mod) and left is not None and left.certain and right is None:
        k = node.right.value if isinstance(node.right, ast.Constant) else None
        if isinstance(k, int) and not isinstance(k, bool) and k >= 2:
            return Change(True, k)
    return Change(False)


def _compare(env: Env, node: ast.Compare) -> Change | None:
    """`i % k == c` (c < k) flips on every cycle: certain, two values; other comparisons may flip."""
    parts = [change(env, node.left), *(change(env, c) for c in node.comparators)]
    if all(p is None for p in parts):
        return None
    if (
        len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
        and parts[0] is not None
        and parts[0].certain
        and parts[0].distinct
        and isinstance(node.comparators[0], ast.Constant)
        and isinstance(node.comparators[0].value, int)
        and 0 <= node.comparators[0].value < parts[0].distinct
    ):
        return Change(True, 2)
    return Change(False, 2)


def _call(env: Env, node: ast.Call) -> Change | None:
    """`str(i)`/`int(i)` keep the change; clocks and random draws may change; any call reading a changing value may."""
    fn = resolve(env, node.func)
    args = [change(env, a) for a in node.args] + [change(env, k.value) for k in node.keywords]
    if (fn is str or fn is int) and len(node.args) == 1 and args[0] is not None:
        return args[0]
    if fn is not MISSING and id(fn) in changing_calls():
        return Change(False)
    if isinstance(node.func, ast.Attribute) and env.changing:  # `sched.value()` of an object the loop advances
        owner = resolve(env, node.func.value)
        if owner is not MISSING and any(key[0] == id(owner) for key in env.changing):
            return Change(False)
    return _any([*args, change(env, node.func)])


def _ifexp(env: Env, node: ast.IfExp) -> Change | None:
    """`a if i % 2 == 0 else b` with two different constants alternates: certain, two values."""
    test, body, orelse = change(env, node.test), change(env, node.body), change(env, node.orelse)
    if (
        test is not None
        and test.certain
        and body is None
        and orelse is None
        and isinstance(node.body, ast.Constant)
        and isinstance(node.orelse, ast.Constant)
        and node.body.value != node.orelse.value
    ):
        return Change(True, 2)
    return _any([test, body, orelse])


def _nonzero_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and bool(node.value)


def step_arguments(node: ast.Call, call: CallArgs, env: Env) -> CallArgs | None:
    """What the step passes a compiled call that is the same object on every call: objects (not tensors, modules or
    numbers) and literal constants; every other argument passed unknown and changing, as ENTRY's. A parameter the
    call does not pass (and no `*`/`**` may fill) runs with its default. None: nothing to bind."""
    literal = {k.arg: isinstance(k.value, ast.Constant) for k in node.keywords if k.arg}
    plain = (torch.Tensor, nn.Module, int, float, str, bool, type(None))

    def keep(value: Any, is_literal: bool) -> tuple[Any, str]:
        if is_literal:
            return value, ""  # the same constant on every call
        known = value is not MISSING and not isinstance(value, (*plain, Display))  # a display is new every call
        return (value if known else MISSING), "some"

    positional = tuple(keep(v, isinstance(node.args[n], ast.Constant)) for n, (v, _) in enumerate(call.positional))
    keywords = tuple((k, *keep(v, literal.get(k, False))) for k, v, _ in call.keywords)
    spread = (
        call.rest
        or any(isinstance(a, ast.Starred) for a in node.args)
        or any(k.arg is None and not displayed(resolve(env, k.value)) for k in node.keywords)
    )
    if spread and all(v is MISSING for v, _ in positional) and all(v is MISSING for _, v, _ in keywords):
        return None
    return CallArgs(positional=positional, keywords=keywords, rest="some" if spread else "")


def displayed(value: Any) -> TypeGuard[Display]:
    """A dict display whose keys the scan still knows (`Display`)."""
    return isinstance(value, Display) and not value.opaque


def returns_number(fn: Any) -> bool:
    """A function or method annotated to return a Python number (`def get_lr(self, i) -> float:`)."""
    if not callable(fn) or isinstance(fn, type):
        return False
    annotations = getattr(getattr(fn, "__func__", fn), "__annotations__", None)
    returned = annotations.get("return") if isinstance(annotations, dict) else None
    return returned in (int, float, "int", "float")


def reads_argument(fn: Any, owner: Any, position: int | None, keyword: str | None, depth: int = 0) -> bool:
    """Whether a compiled method reads what a call passes at `position`/`keyword` (`self` skipped): Dynamo guards
    only what the traced code reads, so a changing value it never reads (Lightning's `batch_idx`, passed on to a
    `training_step` that ignores it) costs nothing. Passing it on to a method the scan can follow, also through
    `*args`/`**kwargs`, is followed; any other use, or an unknown callee, counts as a read."""
    target = getattr(fn, "__func__", fn)
    src = parse_source(target) if isinstance(target, types.FunctionType) and depth < 4 else None
    if src is None or not isinstance(src.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    args = src.node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    spread: int | None = None  # where the value sits in *args
    if keyword is not None:
        named = keyword in params or keyword in {a.arg for a in args.kwonlyargs}
        name = keyword if named else args.kwarg.arg if args.kwarg else None
    elif position is not None and position < len(params):
        name = params[position]
    else:
        name = args.vararg.arg if args.vararg else None
        spread = None if position is None else position - len(params)
    if name is None:
        return False  # no parameter takes it: such a call raises TypeError, it is not the one that runs
    env = Env.of(target, owner, src.node)
    return any(_read_at(env, load, depth) for load in _loads(src.node, name, spread, keyword))


def _loads(
    node: ast.AST, name: str, spread: int | None, keyword: str | None
) -> list[tuple[ast.Call | None, int | None, str | None]]:
    """Each load of a name in a function: (the call it is passed to, the position or keyword it lands on there), or
    (None, None, None) for any other use. A `*args` (`**kwargs`) name passes the value on where it is spread."""
    parents = {id(child): parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    out: list[tuple[ast.Call | None, int | None, str | None]] = []
    for n in ast.walk(node):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        parent = parents.get(id(n))
        grand = parents.get(id(parent))
        if isinstance(parent, ast.keyword) and isinstance(grand, ast.Call):
            passed = parent.arg if parent.arg else keyword if keyword is not None and spread is None else None
            out.append((grand, None, passed) if passed else (None, None, None))
        elif isinstance(parent, ast.Starred) and isinstance(grand, ast.Call) and spread is not None:
            out.append(_at(grand, parent, spread))
        elif isinstance(parent, ast.Call) and n in parent.args and spread is None and keyword is None:
            out.append(_at(parent, n, 0))
        elif (alias := _alias(parent, n, name)) is not None:  # `mask = attention_mask`: read where the alias is
            out += _loads(node, alias, None, None)
        else:
            out.append((None, None, None))
    return out


def _alias(parent: ast.AST | None, load: ast.Name, name: str) -> str | None:
    """The local a plain `alias = name` binds (None for any other use)."""
    if not (isinstance(parent, ast.Assign) and parent.value is load and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    return target.id if isinstance(target, ast.Name) and target.id != name else None


def _at(call: ast.Call, arg: ast.expr, offset: int) -> tuple[ast.Call | None, int | None, str | None]:
    """The position an argument (or a spread tuple, plus `offset`) lands on, when no `*x` comes before it."""
    before = call.args[: call.args.index(arg)]
    if any(isinstance(a, ast.Starred) for a in before):
        return None, None, None
    return call, len(before) + offset, None


def _read_at(env: Env, load: tuple[ast.Call | None, int | None, str | None], depth: int) -> bool:
    """A load that is more than an argument passed on to a method (or submodule) that does not read it."""
    call, position, keyword = load
    if call is None:
        return True
    callee, owner = resolve(env, call.func), MISSING
    if isinstance(callee, nn.Module):
        callee, owner = getattr(type(callee), "forward", None), callee
    elif isinstance(call.func, ast.Attribute):
        owner = resolve(env, call.func.value)
    if owner is MISSING or not isinstance(callee, types.FunctionType):
        return True
    return reads_argument(callee, owner, position, keyword, depth + 1)
