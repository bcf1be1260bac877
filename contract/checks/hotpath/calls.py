"""Calls on the hot path, as the walker meets them: callees are followed into user code (methods, helpers, submodules,
nested functions, `super()`), and calls that break the graph, read the environment or mutate containers are
recorded."""

from __future__ import annotations

import ast
import inspect
import os
import types
from collections.abc import Iterator
from typing import Any, Protocol

from torch import nn

from contract import _torch
from contract.checks.hotpath.classify import form_of
from contract.checks.hotpath.model import MISSING, Cond, Prop, ScanState, Source, Write
from contract.checks.hotpath.resolve import Env, resolve


class Walk(Protocol):
    """What call handling needs of the walk (`walk.Walker`): where it is, what it records, how it follows callees."""

    state: ScanState
    src: Source
    env: Env
    region: str
    depth: int
    guard: Cond | None
    nested: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]

    def where(self, node: ast.AST) -> str: ...
    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True) -> None: ...
    def record_write(self, target: ast.expr, form: str, node: ast.AST, literal: Any = MISSING) -> None: ...
    def enter(self, fn: Any, owner: Any) -> None: ...
    def enter_module(self, module: nn.Module, method: str = "forward") -> None: ...
    def walk_nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None: ...


MUTATORS: dict[type, frozenset[str]] = {
    list: frozenset({"append", "extend", "insert", "pop", "remove", "clear"}),
    dict: frozenset({"update", "setdefault", "pop", "popitem", "clear"}),
}
"""Methods that change a list's length or a dict's keys, which Dynamo guards on."""


_BREAK_CALLS: dict[int, str] = {}


def break_calls() -> dict[int, str]:
    """Callables that graph-break when called from compiled code, by identity."""
    if not _BREAK_CALLS:
        import random
        import time

        named = {
            "time.time": time.time,
            "time.perf_counter": time.perf_counter,
            "time.monotonic": time.monotonic,
            "time.time_ns": time.time_ns,
            "time.process_time": time.process_time,
            "print": print,
            "input": input,
            "breakpoint": breakpoint,
            "next": next,
        }
        named.update(
            {
                f"random.{n}": getattr(random, n)
                for n in ("random", "randint", "uniform", "choice", "shuffle", "gauss", "randrange", "sample")
            }
        )
        _BREAK_CALLS.update({id(v): k for k, v in named.items()})
    return _BREAK_CALLS


def on_call(w: Walk, node: ast.Call) -> None:
    """One call on the hot path: attribute reads by name, computed getattr, nested functions, container children,
    `super()`, `setattr`, container mutators, then the callee itself."""
    func = node.func
    if (
        isinstance(func, ast.Name)
        and func.id in ("hasattr", "getattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
    ):
        target = resolve(w.env, node.args[0])
        if target is not MISSING:
            w.state.reads.add((id(target), str(node.args[1].value)))
    if (
        isinstance(func, ast.Name)
        and func.id == "getattr"
        and len(node.args) >= 2
        and not isinstance(node.args[1], ast.Constant)
        and resolve(w.env, node.args[0]) is not MISSING
    ):
        w.hazard("dynamic-getattr", node, f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})")
    if isinstance(func, ast.Name) and func.id in w.nested:
        return w.walk_nested(w.nested[func.id])
    if isinstance(func, ast.Name) and func.id in w.env.loops and func.id in w.env.local:
        container = resolve(w.env, w.env.loops[func.id])
        return call_children(w, container)
    if isinstance(func, ast.Subscript):
        return call_children(w, resolve(w.env, func.value))
    target = super_target(w.env, func)
    if target is not None:
        return w.enter(target[0], target[1])
    callee = resolve(w.env, func)
    if (
        any(callee is f for f in (setattr, object.__setattr__))
        and len(node.args) == 3
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return setattr_write(w, node)
    if isinstance(func, ast.Attribute) and func.attr in MUTATORS.get(type(resolve(w.env, func.value)), frozenset()):
        mutate(w, func.value, node)
    follow_call(w, node, func, callee)


def mutate(w: Walk, target: ast.expr, node: ast.Call) -> None:
    """`obj.items.append(...)`: a write to the container, also for a module global (no `global` needed)."""
    name = target.id if isinstance(target, ast.Name) else None
    if name is not None and name not in w.env.local and name in w.env.fn.__globals__:
        globs = w.env.fn.__globals__
        w.state.writes.append(
            Write(
                key=(id(globs), name),
                value=globs[name],
                form="mutate",
                where=w.where(node),
                region=w.region,
                what=f"global {name}",
                owner=globs,
                guard=w.guard,
            )
        )
    else:
        w.record_write(target, "mutate", node)


def setattr_write(w: Walk, node: ast.Call) -> None:
    """`setattr(obj, "name", value)` with a constant name is a write to `obj.name`."""
    name = node.args[1]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
        return
    target = ast.copy_location(ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Store()), node)
    w.record_write(target, form_of(node.args[2], target), node)


def call_children(w: Walk, container: Any) -> None:
    """A call through a module container (`self.layers[i](x)`, `for layer in ...: layer(x)`): every child."""
    if isinstance(container, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
        for child in container.children():
            w.enter_module(child)


def follow_call(w: Walk, node: ast.Call, func: ast.expr, callee: Any) -> None:
    """Record a call that breaks the graph or reads the environment; else follow the callee into user code."""
    if callee is MISSING:
        return
    if isinstance(callee, Prop):
        return w.enter(callee.prop.fget, resolve(w.env, func.value)) if isinstance(func, ast.Attribute) else None
    name = break_calls().get(id(callee))
    if name is not None:
        if name != "next" or iterator_arg(w.env, node):
            w.hazard("graph-break", node, f"{name}()")
        return
    if callee is os.getenv or isinstance(func, ast.Attribute) and resolve(w.env, func.value) is os.environ:
        return w.hazard("env", node, f"{ast.unparse(func)}()")
    if _torch.is_compiler_disabled(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (torch.compiler.disable)")
    if isinstance(callee, nn.Module):
        return w.enter_module(callee)
    owner = bound_to(w, node, func, callee)
    if (
        isinstance(owner, nn.Module)
        and isinstance(callee, types.FunctionType)
        and isinstance(func, ast.Attribute)
        and owner is resolve(w.env, func.value)
    ):
        return w.enter_module(owner, func.attr)
    w.enter(callee, owner)


def bound_to(w: Walk, node: ast.Call, func: ast.expr, callee: Any) -> Any:
    """The object a called function runs with as its first argument: `obj.method()`, or `Cls.method(obj)`."""
    if not isinstance(func, ast.Attribute):
        return None
    parent = resolve(w.env, func.value)
    plain = isinstance(inspect.getattr_static(parent, func.attr, None), types.FunctionType)
    if isinstance(parent, type) and plain and node.args:  # not a static/class method
        first = resolve(w.env, node.args[0])
        return first if isinstance(first, parent) else None
    if parent is MISSING or isinstance(parent, (type, types.ModuleType)):
        return None
    if inspect.getattr_static(type(parent), func.attr, None) is not callee:
        return None  # a function stored on the instance is not bound to it
    return parent


def super_target(env: Env, func: ast.expr) -> tuple[Any, Any] | None:
    """(function, instance) for `super().name` / `super(C, obj).name`: the MRO is searched past C on the real object."""
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and env.root(func.value.func.id) is super
    ):
        return None
    args = func.value.args
    if len(args) == 2:
        cls, obj = resolve(env, args[0]), resolve(env, args[1])
    else:
        cls, obj = env.root("__class__"), env.owner
    mro = type(obj).__mro__ if obj is not MISSING and obj is not None else ()
    if not isinstance(cls, type) or cls not in mro:
        return None
    for klass in mro[mro.index(cls) + 1 :]:
        if func.attr in vars(klass):
            return vars(klass)[func.attr], obj
    return None


def iterator_arg(env: Env, node: ast.Call) -> bool:
    """`next(x)` breaks the graph when x is a Python iterator/generator kept on an object."""
    if not node.args:
        return False
    value = resolve(env, node.args[0])
    return isinstance(value, (types.GeneratorType, Iterator)) and not isinstance(value, (list, tuple, dict, str))
