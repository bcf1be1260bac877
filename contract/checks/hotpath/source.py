"""User code as the scan reads it: which functions are worth parsing, what Python runs for a callee, each function's
source parsed once, and the names a function's own scope binds or declares."""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.model import ScanState, Source
from contract.findings import source_path

TRUSTED = frozenset({"torch", "numpy", "einops"}) | frozenset(sys.stdlib_module_names)
"""Packages whose code is not parsed: Dynamo knows torch; the standard library (`re`, `logging`, `warnings`, ...)
and numpy hold no user state, and their calls that break the graph are known by identity where they are made."""


def source_of(state: ScanState, fn: Callable) -> Source | None:
    """Parse a function's source once per code object (None: no source, e.g. C or generated code)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    if code not in state.sources:
        state.sources[code] = parse_source(fn)
    return state.sources[code]


def parse_source(fn: Callable) -> Source | None:
    """Parse a function's source into its AST node and where its lines are (None: no source to read)."""
    try:
        lines, start = inspect.getsourcelines(fn.__code__)  # the code object: `fn` itself would be unwrapped
    except (OSError, TypeError):
        return None
    tree = _parse_lines(textwrap.dedent("".join(lines)), fn.__code__.co_name == "<lambda>")
    if tree is None:
        return None
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))), None)
    if node is None:
        return None
    return Source(node=node, file=source_path(fn.__code__.co_filename), offset=max(start, 1) - 1)


def _parse_lines(text: str, is_lambda: bool) -> ast.AST | None:
    """The lines of a definition; a lambda's lines are often a fragment (`"KEY": lambda: read("KEY"),` inside a dict):
    parsed inside the brackets that make them an expression."""
    candidates = [text]
    if is_lambda:
        body = text.strip().rstrip(",")
        candidates += [f"{{{body}}}", f"({body})", f"[{body}]", f"f({body})"]
    for candidate in candidates:
        try:
            return ast.parse(candidate)
        except (SyntaxError, IndentationError):
            continue
    return None


def user_code(fn: Any) -> bool:
    """Functions worth parsing: Python functions outside torch and the standard helpers. The defining module is read
    from the function's globals (`functools.wraps` copies `__module__` onto a wrapper defined elsewhere)."""
    if not isinstance(fn, types.FunctionType):
        return False
    module = str(fn.__globals__.get("__name__") or getattr(fn, "__module__", None) or "").split(".")[0]
    return module not in TRUSTED and not fn.__code__.co_filename.startswith("<")


@functools.lru_cache(maxsize=4096)
def stored_names(node: ast.AST) -> frozenset[str]:
    """Names (re)bound in a function's own scope (a parameter rebound there no longer holds the caller's object)."""
    return frozenset(
        n.id for n in own_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    )


def loop_item(node: ast.For) -> tuple[ast.expr, ast.expr | None]:
    """What a `for` loop's item is drawn from and the name that holds it: `for x in xs` gives (xs, x), and
    `for i, x in enumerate(xs)` gives (xs, x); the name is None where the target is another shape."""
    it, target = node.iter, node.target
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and it.args:
        pair = target.elts if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
        return it.args[0], pair[1] if pair else None
    return it, target


@functools.lru_cache(maxsize=4096)
def loop_stored_names(node: ast.AST) -> frozenset[str]:
    """Names bound by a loop or inside one (a test before the store sees another value on the next iteration), or
    where the walk does not unbind them in order (`with ... as`, `:=`, `del`)."""
    kinds = (ast.For, ast.AsyncFor, ast.While, ast.withitem, ast.NamedExpr, ast.Delete)
    return frozenset(name for n in own_nodes(node) if isinstance(n, kinds) for name in stored_names(n))


@functools.lru_cache(maxsize=4096)
def declared_names(node: ast.AST, kind: type[ast.Global] | type[ast.Nonlocal]) -> frozenset[str]:
    """Names a function declares `global` (or `nonlocal`) in its own scope, not in functions defined inside it
    (cached per parsed node: every instance of a layer visits the same function)."""
    return frozenset(
        n for s in own_nodes(node) if isinstance(s, (ast.Global, ast.Nonlocal)) and isinstance(s, kind) for n in s.names
    )


def own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: nested functions, lambdas and classes are not entered."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from own_nodes(child)


@functools.lru_cache(maxsize=4096)
def bound_names(node: Any) -> frozenset[str]:
    """Names a function binds: parameters, assignment targets and the functions/classes it defines."""
    args = node.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(
        names
        | {
            n.name
            for n in ast.walk(node)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node
        }
    )


def call_method(fn: Any, owner: Any) -> tuple[Any, Any]:
    """A callable object (a hook instance, a helper object) runs its class's `__call__` with itself bound."""
    if isinstance(fn, (types.FunctionType, type, nn.Module)) or not callable(fn):
        return fn, owner
    call = inspect.getattr_static(type(fn), "__call__", None)
    return (call, fn) if isinstance(call, types.FunctionType) else (fn, owner)


def callee_of(fn: Any, owner: Any) -> tuple[Any, Any]:
    """The function Python runs for a callee, and the object bound to its first argument: methods are split, callable
    objects run their class's `__call__`, and wrappers are unwrapped only where the wrapper is trusted code (a user
    or library wrapper, `functools.wraps` or not, is what Python calls: it is walked itself)."""
    for _ in range(8):
        if isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        if isinstance(fn, types.MethodType):
            fn, owner = fn.__func__, fn.__self__
        fn, owner = call_method(fn, owner)
        inner = getattr(fn, "__wrapped__", None) if callable(fn) else None
        if inner is None or user_code(fn) or _torch_scan.is_compiler_disabled(fn):
            return fn, owner
        fn = inner
    return fn, owner
