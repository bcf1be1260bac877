"""Conditions: what an `if` test is worth while Dynamo traces (from `is_compiling()` and friends, or from the Python
state it reads now), which branches always leave a block, and which values a test turns into a bool."""

from __future__ import annotations

import ast
import enum
import operator
from collections.abc import Iterable, Iterator
from typing import Any

import torch

from contract import _torch_scan
from contract.checks.hotpath import versions
from contract.checks.hotpath.model import MISSING, UNKNOWN, Cond
from contract.checks.hotpath.resolve import Env, chain, iter_values, resolve

COMPILING_NAMES = frozenset({"is_compiling", "is_torchdynamo_compiling", "is_dynamo_compiling"})
"""Names of `is_compiling()` look-alikes (transformers' `is_torchdynamo_compiling`): true while Dynamo traces."""
TRACING_NAMES = frozenset({"is_tracing"})
"""Look-alikes taking a tensor (transformers' `is_tracing(tensor)`: compile, export, jit or fx): true while Dynamo
traces. torch's own `torch.jit.is_tracing()` is known by identity first (false under compile)."""


_KNOWN_UNDER_COMPILE: dict[int, bool | None] = {}


def known_under_compile() -> dict[int, bool | None]:
    """Functions whose result under torch.compile is fixed, by identity: `is_compiling()` and its aliases are True;
    `torch.jit.is_scripting()` and `is_tracing()` are False; `torch.compiler.is_exporting()` depends on torch."""
    if not _KNOWN_UNDER_COMPILE:
        values = {
            "is_compiling": True,
            "is_scripting": False,
            "is_tracing": False,
            "is_exporting": exporting_under_compile(),
        }
        for role, fns in _torch_scan.compile_state_functions().items():
            _KNOWN_UNDER_COMPILE.update({id(fn): values[role] for fn in fns})
    return _KNOWN_UNDER_COMPILE


def exporting_under_compile() -> bool | None:
    """`torch.compiler.is_exporting()` inside torch.compile on the installed torch, as measured per minor (a counter
    under `if not is_exporting():` compiles once where it is True: `versions.PATTERNS["not-exporting-counter"]`);
    None (unknown: both branches are dormant) on a torch between two measured minors that disagree."""
    effect, _ = versions.effect_on(versions.PATTERNS["not-exporting-counter"], versions.torch_minor())
    return None if effect is None else effect == versions.CLEAN


def cond(env: Env, flags: dict[str, Cond], test: ast.expr) -> Cond:
    """What a test is worth under torch.compile: from `is_compiling()` and friends, or from current Python state."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return cond(env, flags, test.operand).negated()
    if isinstance(test, ast.BoolOp):
        return bool_op(isinstance(test.op, ast.And), [cond(env, flags, v) for v in test.values])
    if isinstance(test, ast.Name) and test.id in flags:
        return flags[test.id]
    if isinstance(test, ast.Call):
        return compile_call(env, test)
    if isinstance(test, ast.Compare):
        return compare(env, test)
    return state_value(env, test)


def bool_op(is_and: bool, conds: list[Cond]) -> Cond:
    """`and` is false (`or` true) when one operand is, and known from is_compiling() if that operand is."""
    decisive = [c for c in conds if c.value is (not is_and)]
    if decisive:
        eager = [c for c in decisive if c.eager]
        return eager[0] if eager else merge(not is_and, decisive, eager=False)
    if all(c.value is is_and for c in conds):
        return merge(is_and, conds, eager=all(c.eager for c in conds))
    return UNKNOWN


def merge(value: bool, conds: Iterable[Cond], *, eager: bool) -> Cond:
    """One condition from several, keeping every guard it depends on (for the message and the trust check)."""
    conds = list(conds)
    return Cond(value, eager, tuple(g for c in conds for g in c.guards), frozenset().union(*(c.keys for c in conds)))


def compile_call(env: Env, call: ast.Call) -> Cond:
    """`is_compiling()` (by identity, whatever it is imported as, or by name) is true under compile."""
    fn = resolve(env, call.func)
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    table = known_under_compile()
    if call.args or call.keywords:
        known_fn = fn is not MISSING and id(fn) in table
        return Cond(True, eager=True) if name in TRACING_NAMES and not known_fn else UNKNOWN
    if fn is not MISSING and id(fn) in table and table[id(fn)] is None:
        return Cond(
            None,
            guards=(
                f"{ast.unparse(call)} (its value under torch.compile was not measured on torch {torch.__version__})",
            ),
        )
    known = table.get(id(fn)) if fn is not MISSING else None
    if known is None and name in COMPILING_NAMES:
        known = True
    return UNKNOWN if known is None else Cond(known, eager=True)


_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def compare(env: Env, test: ast.Compare) -> Cond:
    """`self.mode == "x"`, `self.cache is None`, `threshold > 0.0`: decided on the real objects when both sides are
    known scalars."""
    if len(test.ops) != 1 or type(test.ops[0]) not in _COMPARE:
        return UNKNOWN
    sides = [state_value(env, test.left), state_value(env, test.comparators[0])]
    values = [constant(env, test.left), constant(env, test.comparators[0])]
    if any(v is MISSING for v in values):
        return UNKNOWN
    if isinstance(test.ops[0], (ast.In, ast.NotIn)) and not membership(*values):
        return UNKNOWN
    if isinstance(test.ops[0], _ORDER) and not all(type(v) in (int, float) for v in values):
        return UNKNOWN  # `threshold > 0.0` on numbers only
    value = bool(_COMPARE[type(test.ops[0])](*values))
    keys = frozenset().union(*(s.keys for s in sides))
    if keys:
        return Cond(value, False, (f"{ast.unparse(test)} (now {value})",), keys)
    # both sides are constants of this call (literals, arguments the caller passes as constants, unpassed defaults):
    # the other branch never runs here
    return Cond(value, eager=True) if _constant_sides(env, test) else UNKNOWN


def membership(item: Any, container: Any) -> bool:
    """`"x" in "xyz"`, or a scalar in a tuple of scalars (`0 in ranks` with `ranks=[0]` passed as a literal)."""
    if isinstance(item, str) and isinstance(container, str):
        return True
    return is_scalar(item) and type(container) is tuple and all(is_scalar(v) for v in container)


def _constant_sides(env: Env, test: ast.Compare) -> bool:
    """Each side a literal or a name the scan bound to a constant (never rebound in the function)."""
    return all(
        isinstance(n, ast.Constant) or isinstance(n, ast.Name) and n.id in env.args
        for n in (test.left, test.comparators[0])
    )


def constant(env: Env, node: ast.expr) -> Any:
    """A literal, or a scalar read from a real object (MISSING otherwise)."""
    if isinstance(node, ast.Constant):
        return node.value
    value = resolve(env, node)
    if type(value) is tuple and isinstance(node, ast.Name) and node.id in env.args:  # a literal the caller passed
        return value
    return value if is_scalar(value) or value is None or type(value) is float else MISSING


def state_value(env: Env, node: ast.expr) -> Cond:
    """A Python scalar read from a real object (`self.training`, a module global): its truth now."""
    parsed = chain(node)
    bound = parsed is not None and parsed[0] in env.args and parsed[0] not in env.taint
    if parsed is None or parsed[0] in env.local and parsed[0] != env.self_name and not bound:
        return UNKNOWN
    value = constant(env, node)
    if value is MISSING or isinstance(node, ast.Constant):
        return UNKNOWN
    if isinstance(node, ast.Name) and bound and node.id in env.origins:  # a local read from Python state
        return Cond(bool(value), False, (f"{node.id} (now {value!r})",), env.origins[node.id])
    if isinstance(node, ast.Name) and bound:  # a constant of this call (`output_attentions=True` from the step):
        return Cond(bool(value), eager=True)  # the other branch never runs in this call
    if isinstance(node, ast.Attribute):
        parent = resolve(env, node.value)
        key = (id(parent), node.attr)
    elif isinstance(node, ast.Name):
        key = (id(env.fn.__globals__), node.id)
    else:
        return UNKNOWN
    return Cond(bool(value), False, (f"{ast.unparse(node)} (now {value!r})",), frozenset({key}))


def is_scalar(value: Any) -> bool:
    return type(value) in (int, bool, str) or isinstance(value, enum.Enum)


def exits(stmts: list[ast.stmt]) -> bool:
    """Whether a branch always leaves the enclosing block (its last statement returns, raises, breaks, continues)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return exits(last.body)
    return isinstance(last, ast.If) and exits(last.body) and exits(last.orelse)


def walk_expr(node: ast.AST) -> Iterator[ast.AST]:
    """Sub-expressions of a test, not entering lambdas or comprehensions (they are other scopes)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield from walk_expr(child)


def tested_values(test: ast.expr) -> Iterator[ast.expr]:
    """The values Python turns into a bool in a test: operands of `not`/`and`/`or` and of value comparisons."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from tested_values(test.operand)
    elif isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from tested_values(v)
    elif isinstance(test, ast.Compare):
        if not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in test.ops):
            yield test.left
            yield from test.comparators
        elif len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
            yield test.comparators[0]  # `0.0 in mask` asks the tensor for a bool
    else:
        yield test


def non_empty(env: Env, it: ast.expr) -> bool:
    """A `for` loop's iterable known to hold items now: a real non-empty container or module list, `range(3)` /
    `range(self.iters)` on known ints, `enumerate`/`reversed`/`zip` of such (the body runs at least once)."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords:
        if it.func.id == "range" and it.args and resolve(env, it.func) is range:
            bounds = [constant(env, a) for a in it.args]
            return all(type(b) is int for b in bounds) and len(range(*bounds)) > 0
        if it.func.id in ("enumerate", "reversed", "zip") and it.args:
            return all(non_empty(env, a) for a in it.args[: 1 if it.func.id != "zip" else None])
    values = iter_values(env, it)
    return bool(values)


def may_leave(env: Env, flags: dict[str, Cond], stmt: ast.stmt) -> bool:
    """A statement after which the rest of its block may not run although the walk reads it as run: an `if` whose
    undecided arm (or taken arm) holds a `return`/`continue`/`break`, or a `with`/`try`/loop statement holding a
    `return` (a `raise` fails the call anyway: what follows runs on every call that succeeds)."""
    if isinstance(stmt, ast.If):
        test = cond(env, flags, stmt.test)
        arms = [stmt.body, stmt.orelse] if test.value is None else [stmt.body if test.value else stmt.orelse]
        return any(_leaves(s, loops=False) for arm in arms for s in arm)
    if isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try, ast.For, ast.AsyncFor, ast.While)):
        return _leaves(stmt, loops=isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)))
    return False


def _leaves(node: ast.AST, *, loops: bool) -> bool:
    """A `return` anywhere under a statement (not in nested definitions), or a `continue`/`break` not inside a loop
    of its own (`loops`: already inside one)."""
    if isinstance(node, ast.Return) or isinstance(node, (ast.Continue, ast.Break)) and not loops:
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return False
    inner = loops or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
    return any(_leaves(child, loops=inner) for child in ast.iter_child_nodes(node))
