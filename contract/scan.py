"""Static scan of every compiled region's hot path for Python state that makes Dynamo guard, recompile or break.

Starting from each target's method, the scan parses (once per code object) the source of every function the region
reaches: methods on `self`, submodules' `forward` (and `__call__` overrides), helpers, properties and registered
forward hooks. Names are resolved against the *real* objects (the module instances, the function's globals,
closure cells and defaults), so a finding says what the value is (`int`, `float`, tensor...), not what it looks
like. torch's own code is trusted and not parsed. Code that never runs compiled is skipped: under
`if not torch.compiler.is_compiling():` (whatever name it was imported under, in an `and`, through a local flag) and
after `if torch.compiler.is_compiling(): return`. Code behind Python state that is false now (`if self.training:` in
eval mode, a debug flag that is off) is scanned as *dormant*: what it finds there is a warning, never an error.
"""
from __future__ import annotations

import ast
import builtins
import enum
import inspect
import operator
import os
import sys
import textwrap
import types
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import torch
from torch import nn

_MISSING = object()
MAX_VISITS = 20_000
"""Bound on (function, instance) visits per scan: a generated model cannot make the scan run away."""
_TRUSTED = ("torch", "builtins", "functools", "typing", "collections", "contextlib", "abc", "enum", "dataclasses",
            "copy", "inspect", "warnings", "logging", "math", "operator", "itertools", "numpy", "einops")
"""Packages whose code is not parsed: Dynamo knows torch; the rest are not user state."""
_COMPILING = frozenset({"is_compiling", "is_torchdynamo_compiling", "is_dynamo_compiling"})
"""Names of `is_compiling()` look-alikes (transformers' `is_torchdynamo_compiling`): true while Dynamo traces."""
_REDUCTIONS = frozenset({"sum", "any", "all", "max", "min", "mean", "amax", "amin", "prod", "norm", "count_nonzero",
                         "argmax", "argmin", "std", "var", "median", "nonzero"})
"""Tensor methods whose result, read by Python control flow, is data-dependent (a graph break)."""
_MUTATORS = {list: frozenset({"append", "extend", "insert", "pop", "remove", "clear"}),
             dict: frozenset({"update", "setdefault", "pop", "popitem", "clear"})}
"""Methods that change a list's length or a dict's keys, which Dynamo guards on."""
_SHOWN = {int: "int", bool: "bool", str: "str", float: "float", type(None): "None"}


@dataclass(frozen=True, kw_only=True)
class Hazard:
    """One raw observation, turned into a Finding by `contract.rules.cc3xx`."""

    kind: str
    """`counter`, `assigned`, `container`, `float`, `graph-break`, `item-branch`, `env`, `dynamic-getattr`,
    `batchnorm`, `per-instance`."""
    where: str
    """`file:line` (or a module path for instance-level hazards)."""
    region: str
    """Region whose hot path reaches it."""
    what: str
    """Short description of the state or call, e.g. `HazardRouter.batches (int)`."""
    certain: bool = True
    """False when a name could not be resolved to a value, or when the code is dormant (the finding is a warning)."""
    guard: str = ""
    """For dormant code: the Python state that keeps it from running compiled now, e.g. `self.training (now False)`."""
    note: str = ""
    """How the installed torch differs from the rule's description, where it was measured to."""


@dataclass(frozen=True)
class _Source:
    """A parsed function: its AST and where its lines are."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    file: str
    offset: int


@dataclass(frozen=True)
class _Cond:
    """What an `if` test is worth while Dynamo traces, so the branch that cannot run compiled is not scanned as hot."""

    value: bool | None
    """The test's value under torch.compile; None when unknown."""
    eager: bool = False
    """Known from `is_compiling()` and friends alone: the other branch never runs compiled, whatever the state."""
    guards: tuple[str, ...] = ()
    """The Python state it was read from, shown (`self.training (now False)`)."""
    keys: frozenset[tuple[int, str]] = frozenset()
    """That state's (container id, name): a guard the hot path itself rewrites is not trusted."""

    def negated(self) -> _Cond:
        """The value of `not test`."""
        return _Cond(None if self.value is None else not self.value, self.eager, self.guards, self.keys)


_UNKNOWN = _Cond(None)


@dataclass(kw_only=True)
class _Write:
    key: tuple[int, str]
    value: Any
    form: str
    """`assign`, `step` (changes every call: `+= 1`, `not x`), `selfref` (reads itself: `max(x, n)`), `mutate`."""
    where: str
    region: str
    what: str
    owner: Any
    guard: _Cond | None = None
    """The dormant guard around the write (None: the write runs compiled now)."""
    literal: Any = _MISSING
    """The constant assigned, for `x = False` (a hot write that cannot turn a dormant guard on)."""
    via: str = ""
    """`cell` for a closure variable, `class` for a class attribute (torch 2.11 handles both differently)."""


@dataclass(kw_only=True)
class ScanState:
    """Everything one scan collects; parse results are cached per code object across regions and instances."""

    sources: dict[Any, _Source | None] = field(default_factory=dict)
    visited: set[tuple[Any, int, str]] = field(default_factory=set)
    writes: list[_Write] = field(default_factory=list)
    reads: set[tuple[int, str]] = field(default_factory=set)
    scalar_reads: dict[tuple[str, str, str], set[Any]] = field(default_factory=dict)
    hazards: list[Hazard] = field(default_factory=list)
    visits: int = 0


def scan(binding: Any) -> list[Hazard]:
    """Scan the hot path of every enabled region of a binding; returns raw hazards, deduplicated by location."""
    state = ScanState()
    for rb in binding.regions.values():
        if not rb.region.enabled:
            continue
        for target in rb.targets:
            fn = getattr(type(target.module), target.method, None)
            _visit_callable(state, fn, target.module, rb.region.name)
            _visit_hooks(state, target.module, rb.region.name)
            _instance_hazards(state, target.module, target.path, rb.region.name)
    state.hazards += _classify_writes(state)
    state.hazards += _per_instance(state, binding)
    return _dedupe(state.hazards)


def _dedupe(hazards: list[Hazard]) -> list[Hazard]:
    """One hazard per (kind, location); a certain one wins over a dormant or unresolved one at the same place."""
    seen: dict[tuple[str, str], Hazard] = {}
    for h in hazards:
        key = (h.kind, h.where)
        if key not in seen or h.certain and not seen[key].certain:
            seen[key] = h
    return list(seen.values())


# ---------------------------------------------------------------------------------------------------- sources


def _source(state: ScanState, fn: Callable) -> _Source | None:
    """Parse a function's source once per code object (None: no source, e.g. C or generated code)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    if code not in state.sources:
        state.sources[code] = _parse(fn)
    return state.sources[code]


def _parse(fn: Callable) -> _Source | None:
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))),
                None)
    if node is None:
        return None
    return _Source(node=node, file=short_path(fn.__code__.co_filename), offset=max(start, 1) - 1)


def short_path(filename: str) -> str:
    """Stable file name for locations: relative to the working directory, else to its `sys.path` entry."""
    path = Path(filename)
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        pass
    roots = sorted((Path(p).resolve() for p in sys.path if p), key=lambda p: len(str(p)), reverse=True)
    for root in roots:
        try:
            return path.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
    return path.as_posix()


def _user_code(fn: Any) -> bool:
    """Functions worth parsing: Python functions outside torch and the standard helpers."""
    if not isinstance(fn, types.FunctionType):
        return False
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    return module not in _TRUSTED and not fn.__code__.co_filename.startswith("<")


# ----------------------------------------------------------------------------------------------------- visits


def _visit_callable(state: ScanState, fn: Any, owner: Any, region: str, depth: int = 0,
                    guard: _Cond | None = None) -> None:
    """Visit a function reached on the hot path, with the object bound as its first argument (or None)."""
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    if isinstance(fn, types.MethodType):
        fn, owner = fn.__func__, fn.__self__
    fn, owner = _call_method(fn, owner)
    fn = inspect.unwrap(fn, stop=lambda f: getattr(f, "_torchdynamo_disable", False)) if callable(fn) else fn
    if depth > 40 or state.visits >= MAX_VISITS or not _user_code(fn):
        return
    key = (fn.__code__, id(owner), region, guard is None)
    if key in state.visited:
        return
    state.visited.add(key)
    state.visits += 1
    src = _source(state, fn)
    if src is not None:
        _Walker(state, src, _Env.of(fn, owner, src.node), region, depth, guard).run()


def _call_method(fn: Any, owner: Any) -> tuple[Any, Any]:
    """A callable object (a hook instance, a helper object) runs its class's `__call__` with itself bound."""
    if isinstance(fn, (types.FunctionType, type, nn.Module)) or not callable(fn):
        return fn, owner
    call = getattr(type(fn), "__call__", None)
    return (call, fn) if isinstance(call, types.FunctionType) else (fn, owner)


def _visit_module(state: ScanState, module: nn.Module, region: str, depth: int, method: str = "forward",
                  guard: _Cond | None = None) -> None:
    """A submodule called on the hot path: its method (and `__call__` override), or torch containers' children."""
    cls = type(module)
    if cls.__module__.split(".")[0] == "torch":
        if isinstance(module, (nn.Sequential, nn.ModuleList, nn.ModuleDict)):
            for child in module.children():
                _visit_module(state, child, region, depth + 1, guard=guard)
        return
    _visit_callable(state, getattr(cls, method, None), module, region, depth + 1, guard)
    if method == "forward" and cls.__call__ is not nn.Module.__call__:
        _visit_callable(state, cls.__call__, module, region, depth + 1, guard)


def _visit_hooks(state: ScanState, module: nn.Module, region: str) -> None:
    """Forward hooks registered on the region's modules run inside the compiled call."""
    for sub in module.modules():
        for hooks in (sub._forward_pre_hooks, sub._forward_hooks):
            for hook in list(hooks.values()):
                _visit_callable(state, hook, getattr(hook, "__self__", None), region, 1)


def _instance_hazards(state: ScanState, module: nn.Module, path: str, region: str) -> None:
    """Hazards of torch's own modules: BatchNorm with `momentum=None` divides by a counter it reads as a Python value."""
    from torch.nn.modules.batchnorm import _BatchNorm

    for name, sub in module.named_modules():
        if isinstance(sub, _BatchNorm) and sub.momentum is None and sub.track_running_stats and sub.training:
            where = ".".join(p for p in (path, name) if p) or "<root>"
            state.hazards.append(Hazard(kind="batchnorm", where=where, region=region,
                                        what=f"{type(sub).__name__}(momentum=None)"))


# -------------------------------------------------------------------------------------------------- resolving


@dataclass(kw_only=True)
class _Env:
    """How names resolve inside one visited function."""

    fn: types.FunctionType
    owner: Any
    self_name: str | None
    local: set[str]
    declared: set[str]
    defaults: dict[str, Any]
    loops: dict[str, ast.expr] = field(default_factory=dict)

    @classmethod
    def of(cls, fn: types.FunctionType, owner: Any, node: ast.AST) -> _Env:
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        self_name = params[0] if params and owner is not None else None
        declared = _declared(node, ast.Global) | _declared(node, ast.Nonlocal)
        sig_defaults = dict(zip(params[len(params) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
        sig_defaults.update(fn.__kwdefaults__ or {})
        return cls(fn=fn, owner=owner, self_name=self_name, local=_bound(node) - declared, declared=declared,
                   defaults=sig_defaults)

    def nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> _Env:
        """The env of a function defined inside this one: its own names are local, free names resolve as here."""
        nonlocal_ = _declared(node, ast.Nonlocal)
        own = _bound(node) - nonlocal_ - _declared(node, ast.Global)
        return _Env(fn=self.fn, owner=self.owner, self_name=None if self.self_name in own else self.self_name,
                    local=own | (self.local - {self.self_name}) | (nonlocal_ & self.local),
                    declared=_declared(node, ast.Global) | (nonlocal_ - self.local),
                    defaults={k: v for k, v in self.defaults.items() if k not in own})

    def root(self, name: str) -> Any:
        """The object a bare name refers to, or _MISSING for locals and unknowns."""
        if name == self.self_name:
            return self.owner
        if name in self.defaults and isinstance(self.defaults[name], (dict, list)):
            return self.defaults[name]
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
        if name in cells:
            try:
                return cells[name].cell_contents
            except ValueError:
                return _MISSING
        if name in self.local:
            return _MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, _MISSING)

    def slot(self, name: str) -> tuple[Any, str] | None:
        """(namespace, key) a `global`/`nonlocal` name is stored in, for writes to bare names."""
        if name not in self.declared:
            return None
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
        if name in cells:
            return cells[name], "cell_contents"
        return self.fn.__globals__, name


def _declared(node: ast.AST, kind: type) -> set[str]:
    """Names a function declares `global` (or `nonlocal`) in its own scope, not in functions defined inside it."""
    return {n for s in _own_nodes(node) if isinstance(s, kind) for n in s.names}


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: nested functions, lambdas and classes are not entered."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(child)


def _bound(node: Any) -> set[str]:
    """Names a function binds: parameters, assignment targets and the functions/classes it defines."""
    args = node.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names | {n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.ClassDef)) and n is not node}


@dataclass(frozen=True)
class _Prop:
    """A property met while resolving: reading it calls its getter."""

    prop: property


def static_get(obj: Any, name: str) -> Any:
    """An attribute without running descriptors: module parameters/buffers/submodules, instance dict, class."""
    if obj is _MISSING:
        return _MISSING
    if isinstance(obj, nn.Module):
        for table in (obj._parameters, obj._buffers, obj._modules):
            if name in table:
                return table[name]
    if isinstance(obj, types.ModuleType):
        return getattr(obj, name, _MISSING)
    inst = getattr(obj, "__dict__", None)
    if isinstance(inst, dict) and name in inst:
        return inst[name]
    try:
        attr = inspect.getattr_static(obj, name)
    except AttributeError:
        return _MISSING
    if isinstance(attr, property):
        return _Prop(attr)
    if isinstance(attr, (staticmethod, classmethod)):
        return attr.__func__
    if type(attr).__name__ in ("member_descriptor", "getset_descriptor"):
        try:
            return getattr(obj, name)
        except Exception:  # a slot not set yet
            return _MISSING
    return attr


def _chain(node: ast.expr) -> tuple[str, list[str]] | None:
    """`a.b.c` -> ("a", ["b", "c"]); None for anything that is not a plain attribute chain."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Call) and _is_type_of_self(node):
        return "__class__", attrs[::-1]
    return (node.id, attrs[::-1]) if isinstance(node, ast.Name) else None


def _is_type_of_self(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 1 \
        and isinstance(node.args[0], ast.Name)


def _resolve(env: _Env, node: ast.expr) -> Any:
    """The real object an expression names, or _MISSING."""
    if isinstance(node, ast.Call) and _is_type_of_self(node):
        base = env.root(node.args[0].id)
        return type(base) if base is not _MISSING else _MISSING
    parsed = _chain(node)
    if parsed is None:
        return _MISSING
    root, attrs = parsed
    obj = env.root(root) if root != "__class__" else _resolve(env, node)
    for a in attrs:
        obj = static_get(obj, a)
        if isinstance(obj, _Prop) or obj is _MISSING:
            return obj
    return obj


def _parent_and_name(env: _Env, target: ast.expr) -> tuple[Any, str, str] | None:
    """For a write target: (container object, key, shown name), resolved against real objects."""
    if isinstance(target, ast.Attribute):
        parent = _resolve(env, target.value)
        if parent is _MISSING or isinstance(parent, _Prop):
            return None
        return parent, target.attr, f"{_type_name(parent)}.{target.attr}"
    if isinstance(target, ast.Subscript):
        parent = _resolve(env, target.value)
        if not isinstance(parent, (dict, list)):
            return None
        key = _static_key(env, target.slice)
        if key is _MISSING:
            return parent, _ANY_KEY, f"{ast.unparse(target)}"
        return parent, repr(key), f"{ast.unparse(target.value)}[{key!r}]"
    if isinstance(target, ast.Name):
        slot = env.slot(target.id)
        if slot is not None:
            return slot[0], slot[1], f"{'global' if isinstance(slot[0], dict) else 'nonlocal'} {target.id}"
    return None


_ANY_KEY = "[*]"
"""The key of a subscript write whose index is not known statically (`self.hits[e] += 1`)."""


def _static_key(env: _Env, node: ast.expr) -> Any:
    """A subscript index known before the call: a constant, or a scalar on a real object (`self.key`)."""
    if isinstance(node, ast.Constant):
        return node.value
    value = _resolve(env, node)
    return value if type(value) in (int, str, bool) else _MISSING


def _value(parent: Any, key: str) -> Any:
    if key == _ANY_KEY:
        return _any_value(parent)
    if isinstance(parent, dict):
        if key in parent:
            return parent[key]
        try:
            return parent.get(ast.literal_eval(key), _MISSING)
        except (ValueError, SyntaxError, TypeError):
            return _MISSING
    if isinstance(parent, list):
        try:
            return parent[int(key)]
        except (ValueError, IndexError):
            return _MISSING
    return static_get(parent, key)


def _any_value(container: dict | list) -> Any:
    """What an element at an unknown index holds: the first value when all values are of one type."""
    values = list(container.values() if isinstance(container, dict) else container)
    return values[0] if len({type(v) for v in values}) == 1 else _MISSING


def _type_name(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return obj.__name__ if isinstance(obj, type) else type(obj).__name__


# ----------------------------------------------------------------------------------------------------- walker


_BREAK_CALLS: dict[int, str] = {}


def _break_calls() -> dict[int, str]:
    """Callables that graph-break when called from compiled code, by identity."""
    if not _BREAK_CALLS:
        import random
        import time

        named = {"time.time": time.time, "time.perf_counter": time.perf_counter, "time.monotonic": time.monotonic,
                 "time.time_ns": time.time_ns, "time.process_time": time.process_time, "print": print,
                 "input": input, "breakpoint": breakpoint, "next": next}
        named.update({f"random.{n}": getattr(random, n) for n in
                      ("random", "randint", "uniform", "choice", "shuffle", "gauss", "randrange", "sample")})
        _BREAK_CALLS.update({id(v): k for k, v in named.items()})
    return _BREAK_CALLS


_KNOWN_UNDER_COMPILE: dict[int, bool | None] = {}


def _known_under_compile() -> dict[int, bool | None]:
    """Functions whose result under torch.compile is fixed, by identity: `is_compiling()` and its aliases are True;
    `torch.jit.is_scripting()` and `is_tracing()` are False; `torch.compiler.is_exporting()` depends on torch."""
    if not _KNOWN_UNDER_COMPILE:
        import importlib

        places = [("torch.compiler", "is_compiling", True), ("torch.compiler", "is_dynamo_compiling", True),
                  ("torch._dynamo", "is_compiling", True), ("torch._dynamo.external_utils", "is_compiling", True),
                  ("torch._utils", "is_compiling", True), ("torch.jit", "is_scripting", False),
                  ("torch.jit", "is_tracing", False), ("torch.compiler", "is_exporting", _exporting_under_compile())]
        for module, name, value in places:
            try:
                fn = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):
                continue
            _KNOWN_UNDER_COMPILE[id(fn)] = value
    return _KNOWN_UNDER_COMPILE


def torch_minor() -> tuple[int, int]:
    """The installed torch's (major, minor): a few behaviours below were measured per version."""
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def _exporting_under_compile() -> bool | None:
    """`torch.compiler.is_exporting()` inside torch.compile: True on torch 2.11, False on 2.13 (both measured);
    None (unknown: both branches are dormant) in between."""
    return True if torch_minor() < (2, 12) else False if torch_minor() >= (2, 13) else None


class _Walker(ast.NodeVisitor):
    """Walks one function's body once for one (function, instance) visit, emitting hazards and further visits."""

    def __init__(self, state: ScanState, src: _Source, env: _Env, region: str, depth: int,
                 guard: _Cond | None = None) -> None:
        self.state, self.src, self.env, self.region, self.depth = state, src, env, region, depth
        self.guard = guard
        """The dormant guard the code walked now sits behind (None: it runs compiled)."""
        self.flags: dict[str, _Cond] = {}
        """Locals holding a compile check (`eager = not is_compiling()`)."""
        self.nested: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        """Functions defined in this body, visited where they are called."""

    def run(self) -> None:
        body = self.src.node.body
        self._block(body if isinstance(body, list) else [ast.Expr(body)])

    def where(self, node: ast.AST) -> str:
        return f"{self.src.file}:{self.src.offset + node.lineno}"

    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True) -> None:
        guard = ", ".join(self.guard.guards) if self.guard else ""
        self.state.hazards.append(Hazard(kind=kind, where=self.where(node), region=self.region, what=what,
                                         certain=certain, guard=guard))

    # ------------------------------------------------------------------------------------------ control flow

    def generic_visit(self, node: ast.AST) -> None:
        """As NodeVisitor's, but statement lists go through `_block` (early exits under `is_compiling()`)."""
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._block(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def _block(self, stmts: list[ast.stmt]) -> None:
        """Visit statements in order; after `if is_compiling(): return`, the rest runs only eagerly."""
        for i, stmt in enumerate(stmts):
            self.visit(stmt)
            exit_cond = self._exit_cond(stmt)
            if exit_cond is None:
                continue
            if not exit_cond.eager:
                with self._dormant(exit_cond):
                    self._block(stmts[i + 1:])
            return

    def _exit_cond(self, stmt: ast.stmt) -> _Cond | None:
        """The condition under which an `if` leaves the block when compiled (return/raise/continue/break)."""
        if not isinstance(stmt, ast.If):
            return None
        cond = self._cond(stmt.test)
        taken = stmt.body if cond.value else stmt.orelse
        return cond if cond.value is not None and _exits(taken) else None

    @contextmanager
    def _dormant(self, cond: _Cond) -> Iterator[None]:
        """Walk a branch that Python state keeps from running compiled now."""
        outer = self.guard
        self.guard = cond if outer is None else _Cond(False, False, outer.guards + cond.guards, outer.keys | cond.keys)
        try:
            yield
        finally:
            self.guard = outer

    def _cond(self, test: ast.expr) -> _Cond:
        return _cond(self.env, self.flags, test)

    # nested definitions run later (or never): their bodies are visited only when called
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.nested[node.name] = node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        cond = self._cond(node.test)
        if cond.value is None and cond.guards:
            with self._dormant(cond):
                self._block(node.body)
                self._block(node.orelse)
            return
        if cond.value is None:
            self._test(node.test)
            self.visit(node.test)
            self._block(node.body)
            self._block(node.orelse)
            return
        taken, other = (node.body, node.orelse) if cond.value else (node.orelse, node.body)
        if not cond.eager:
            self.visit(node.test)
        self._block(taken)
        if not cond.eager:
            with self._dormant(cond):
                self._block(other)

    def visit_While(self, node: ast.While) -> None:
        self._test(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._test(node.test)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and it.args:
            it = it.args[0]
            target = node.target.elts[1] if isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2 else None
        else:
            target = node.target
        if isinstance(target, ast.Name):
            self.env.loops[target.id] = it
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            for arg in it.args:
                self._test(arg)
        self.generic_visit(node)

    # --------------------------------------------------------------------------------------------- writes

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._write(node.target, _aug_form(node), node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._write(target, _form(node.value, target), node, _literal(node.value))
            self._flag(target, node.value)
        self.visit(node.value)
        for target in node.targets:
            if not isinstance(target, (ast.Attribute, ast.Name)):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._write(node.target, _form(node.value, node.target), node, _literal(node.value))
            self._flag(node.target, node.value)
            self.visit(node.value)

    def _flag(self, target: ast.expr, value: ast.expr) -> None:
        """Remember a local that holds a compile check (`eager = not is_compiling()`); forget it when rebound."""
        if isinstance(target, ast.Name):
            cond = self._cond(value)
            if cond.eager:
                self.flags[target.id] = cond
            else:
                self.flags.pop(target.id, None)

    # ---------------------------------------------------------------------------------------------- reads

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.env.local:
            slot = (self.env.fn.__globals__, node.id) if node.id in self.env.fn.__globals__ else None
            if slot is not None:
                self.state.reads.add((id(slot[0]), slot[1]))

    def visit_Subscript(self, node: ast.Subscript) -> None:
        import os as _os

        container = _resolve(self.env, node.value)
        if container is _os.environ:
            self.hazard("env", node, f"os.environ[{ast.unparse(node.slice)}]")
        elif isinstance(container, (dict, list)):
            key = _static_key(self.env, node.slice)
            if key is not _MISSING:
                self.state.reads.add((id(container), repr(key)))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and \
                any(_resolve(self.env, c) is os.environ for c in node.comparators):
            self.hazard("env", node, "a membership test on os.environ")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._call(node)
        self.generic_visit(node)

    # ------------------------------------------------------------------------------------------------ events

    def _read(self, node: ast.Attribute) -> None:
        parent = _resolve(self.env, node.value)
        if parent is _MISSING or isinstance(parent, _Prop):
            return
        self.state.reads.add((id(parent), node.attr))
        value = static_get(parent, node.attr)
        if isinstance(value, _Prop):
            _visit_callable(self.state, value.prop.fget, parent, self.region, self.depth + 1, self.guard)
        elif type(value) in (int, str) and isinstance(parent, nn.Module) and _chain(node) is not None \
                and _chain(node)[0] == self.env.self_name:
            key = (self.region, self.where(node), f"{type(parent).__name__}.{node.attr}")
            self.state.scalar_reads.setdefault(key, set()).add((id(parent), value))

    def _write(self, target: ast.expr, form: str, node: ast.AST, literal: Any = _MISSING) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._write(elt, form, node)
            return
        found = _parent_and_name(self.env, target)
        if found is None:
            return
        parent, key, what = found
        store = parent.cell_contents if type(parent).__name__ == "cell" else parent
        value = _value(parent, key) if type(parent).__name__ != "cell" else _cell_value(parent)
        via = "cell" if type(parent).__name__ == "cell" else "class" if isinstance(parent, type) else ""
        self.state.writes.append(_Write(key=(id(parent), key), value=value, form=form, where=self.where(node),
                                        region=self.region, what=what, owner=store, guard=self.guard,
                                        literal=literal, via=via))

    def _test(self, test: ast.expr) -> None:
        """Python control flow on a tensor's value breaks the graph: `.item()`, `int(t)`, `t.sum() > 0` in a test."""
        for sub in _walk_expr(test):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                    sub.func.attr in ("item", "tolist") and not sub.args:
                return self.hazard("item-branch", sub, f"{ast.unparse(sub)[:60]} in a condition")
            if isinstance(sub, ast.Call) and any(_resolve(self.env, sub.func) is f for f in (int, float, bool)) and \
                    len(sub.args) == 1 and _tensor_valued(self.env, sub.args[0]):
                return self.hazard("item-branch", sub, f"{ast.unparse(sub)[:60]} in a condition")
        for sub in _tested_values(test):
            if _tensor_valued(self.env, sub):
                return self.hazard("item-branch", sub, f"tensor {ast.unparse(sub)[:60]} in a condition")

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("hasattr", "getattr") and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant):
            target = _resolve(self.env, node.args[0])
            if target is not _MISSING:
                self.state.reads.add((id(target), str(node.args[1].value)))
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2 \
                and not isinstance(node.args[1], ast.Constant) and _resolve(self.env, node.args[0]) is not _MISSING:
            self.hazard("dynamic-getattr", node, f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})")
        if isinstance(func, ast.Name) and func.id in self.nested:
            return self._call_nested(self.nested[func.id])
        if isinstance(func, ast.Name) and func.id in self.env.loops and func.id in self.env.local:
            container = _resolve(self.env, self.env.loops[func.id])
            return self._call_children(container)
        if isinstance(func, ast.Subscript):
            return self._call_children(_resolve(self.env, func.value))
        target = _super_target(self.env, func)
        if target is not None:
            return _visit_callable(self.state, target[0], target[1], self.region, self.depth + 1, self.guard)
        callee = _resolve(self.env, func)
        if any(callee is f for f in (setattr, object.__setattr__)) and len(node.args) == 3 and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            return self._setattr(node)
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS.get(type(_resolve(self.env, func.value)), ()):
            self._mutate(func.value, node)
        self._callee(node, func, callee)

    def _mutate(self, target: ast.expr, node: ast.Call) -> None:
        """`obj.items.append(...)`: a write to the container, also for a module global (no `global` needed)."""
        name = target.id if isinstance(target, ast.Name) else None
        if name is not None and name not in self.env.local and name in self.env.fn.__globals__:
            globs = self.env.fn.__globals__
            self.state.writes.append(_Write(key=(id(globs), name), value=globs[name], form="mutate",
                                            where=self.where(node), region=self.region, what=f"global {name}",
                                            owner=globs, guard=self.guard))
        else:
            self._write(target, "mutate", node)

    def _setattr(self, node: ast.Call) -> None:
        """`setattr(obj, "name", value)` with a constant name is a write to `obj.name`."""
        target = ast.copy_location(ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Store()), node)
        self._write(target, _form(node.args[2], target), node)

    def _call_nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A function defined in this body and called here: walk its body with its own locals."""
        key = (self.env.fn.__code__, node.lineno, id(self.env.owner), self.region, self.guard is None)
        if key in self.state.visited:
            return
        self.state.visited.add(key)
        src = _Source(node=node, file=self.src.file, offset=self.src.offset)
        _Walker(self.state, src, self.env.nested(node), self.region, self.depth + 1, self.guard).run()

    def _call_children(self, container: Any) -> None:
        if isinstance(container, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
            for child in container.children():
                _visit_module(self.state, child, self.region, self.depth, guard=self.guard)

    def _callee(self, node: ast.Call, func: ast.expr, callee: Any) -> None:
        if callee is _MISSING:
            return
        if isinstance(callee, _Prop):
            return _visit_callable(self.state, callee.prop.fget, _resolve(self.env, func.value), self.region,
                                   self.depth + 1, self.guard) if isinstance(func, ast.Attribute) else None
        name = _break_calls().get(id(callee))
        if name is not None:
            if name != "next" or _iterator_arg(self.env, node):
                self.hazard("graph-break", node, f"{name}()")
            return
        if callee is os.getenv or isinstance(func, ast.Attribute) and _resolve(self.env, func.value) is os.environ:
            return self.hazard("env", node, f"{ast.unparse(func)}()")
        if getattr(callee, "_torchdynamo_disable", False):
            return self.hazard("graph-break", node, f"{ast.unparse(func)}() (torch.compiler.disable)")
        if isinstance(callee, nn.Module):
            return _visit_module(self.state, callee, self.region, self.depth, guard=self.guard)
        owner = self._bound_to(node, func, callee)
        if isinstance(owner, nn.Module) and isinstance(callee, types.FunctionType) and isinstance(func, ast.Attribute) \
                and owner is _resolve(self.env, func.value):
            return _visit_module(self.state, owner, self.region, self.depth, method=func.attr, guard=self.guard)
        _visit_callable(self.state, callee, owner, self.region, self.depth + 1, self.guard)

    def _bound_to(self, node: ast.Call, func: ast.expr, callee: Any) -> Any:
        """The object a called function runs with as its first argument: `obj.method()`, or `Cls.method(obj)`."""
        if not isinstance(func, ast.Attribute):
            return None
        parent = _resolve(self.env, func.value)
        plain = isinstance(inspect.getattr_static(parent, func.attr, None), types.FunctionType)
        if isinstance(parent, type) and plain and node.args:  # not a static/class method
            first = _resolve(self.env, node.args[0])
            return first if isinstance(first, parent) else None
        if parent is _MISSING or isinstance(parent, (type, types.ModuleType)):
            return None
        if inspect.getattr_static(type(parent), func.attr, None) is not callee:
            return None  # a function stored on the instance is not bound to it
        return parent


def _super_target(env: _Env, func: ast.expr) -> tuple[Any, Any] | None:
    """(function, instance) for `super().name` / `super(C, obj).name`: the MRO is searched past C on the real object."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and
            isinstance(func.value.func, ast.Name) and env.root(func.value.func.id) is super):
        return None
    args = func.value.args
    if len(args) == 2:
        cls, obj = _resolve(env, args[0]), _resolve(env, args[1])
    else:
        cls, obj = env.root("__class__"), env.owner
    mro = type(obj).__mro__ if obj is not _MISSING and obj is not None else ()
    if not isinstance(cls, type) or cls not in mro:
        return None
    for klass in mro[mro.index(cls) + 1:]:
        if func.attr in vars(klass):
            return vars(klass)[func.attr], obj
    return None


def _iterator_arg(env: _Env, node: ast.Call) -> bool:
    """`next(x)` breaks the graph when x is a Python iterator/generator kept on an object."""
    if not node.args:
        return False
    value = _resolve(env, node.args[0])
    return isinstance(value, (types.GeneratorType, Iterator)) and not isinstance(value, (list, tuple, dict, str))


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def _exits(stmts: list[ast.stmt]) -> bool:
    """Whether a branch always leaves the enclosing block (its last statement returns, raises, breaks, continues)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _exits(last.body)
    return isinstance(last, ast.If) and _exits(last.body) and _exits(last.orelse)


# ------------------------------------------------------------------------------------------------ conditions


def _cond(env: _Env, flags: dict[str, _Cond], test: ast.expr) -> _Cond:
    """What a test is worth under torch.compile: from `is_compiling()` and friends, or from current Python state."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _cond(env, flags, test.operand).negated()
    if isinstance(test, ast.BoolOp):
        return _bool_op(isinstance(test.op, ast.And), [_cond(env, flags, v) for v in test.values])
    if isinstance(test, ast.Name) and test.id in flags:
        return flags[test.id]
    if isinstance(test, ast.Call):
        return _compile_call(env, test)
    if isinstance(test, ast.Compare):
        return _compare(env, test)
    return _state(env, test)


def _bool_op(is_and: bool, conds: list[_Cond]) -> _Cond:
    """`and` is false (`or` true) when one operand is, and known from is_compiling() if that operand is."""
    decisive = [c for c in conds if c.value is (not is_and)]
    if decisive:
        eager = [c for c in decisive if c.eager]
        return eager[0] if eager else _merge(not is_and, decisive, eager=False)
    if all(c.value is is_and for c in conds):
        return _merge(is_and, conds, eager=all(c.eager for c in conds))
    return _UNKNOWN


def _merge(value: bool, conds: Iterable[_Cond], *, eager: bool) -> _Cond:
    """One condition from several, keeping every guard it depends on (for the message and the trust check)."""
    conds = list(conds)
    return _Cond(value, eager, tuple(g for c in conds for g in c.guards), frozenset().union(*(c.keys for c in conds)))


def _compile_call(env: _Env, call: ast.Call) -> _Cond:
    """`is_compiling()` (by identity, whatever it is imported as, or by name) is true under compile."""
    if call.args or call.keywords:
        return _UNKNOWN
    fn = _resolve(env, call.func)
    table = _known_under_compile()
    if fn is not _MISSING and id(fn) in table and table[id(fn)] is None:
        return _Cond(None, guards=(f"{ast.unparse(call)} (its value under torch.compile was not measured on torch "
                                   f"{torch.__version__})",))
    known = table.get(id(fn)) if fn is not _MISSING else None
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if known is None and name in _COMPILING:
        known = True
    return _UNKNOWN if known is None else _Cond(known, eager=True)


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _compare(env: _Env, test: ast.Compare) -> _Cond:
    """`self.mode == "x"`, `self.cache is None`: decided on the real objects when both sides are known scalars."""
    if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        return _UNKNOWN
    sides = [_state(env, test.left), _state(env, test.comparators[0])]
    values = [_constant(env, test.left), _constant(env, test.comparators[0])]
    if any(v is _MISSING for v in values):
        return _UNKNOWN
    value = bool(_COMPARE[type(test.ops[0])](*values))
    keys = frozenset().union(*(s.keys for s in sides))
    return _Cond(value, False, (f"{ast.unparse(test)} (now {value})",), keys) if keys else _UNKNOWN


def _constant(env: _Env, node: ast.expr) -> Any:
    """A literal, or a scalar read from a real object (_MISSING otherwise)."""
    if isinstance(node, ast.Constant):
        return node.value
    value = _resolve(env, node)
    return value if _scalar(value) or value is None or type(value) is float else _MISSING


def _state(env: _Env, node: ast.expr) -> _Cond:
    """A Python scalar read from a real object (`self.training`, a module global): its truth now."""
    parsed = _chain(node)
    if parsed is None or parsed[0] in env.local and parsed[0] != env.self_name:
        return _UNKNOWN
    value = _constant(env, node)
    if value is _MISSING or isinstance(node, ast.Constant):
        return _UNKNOWN
    if isinstance(node, ast.Attribute):
        parent = _resolve(env, node.value)
        key = (id(parent), node.attr)
    else:
        key = (id(env.fn.__globals__), node.id)
    return _Cond(bool(value), False, (f"{ast.unparse(node)} (now {value!r})",), frozenset({key}))


# ------------------------------------------------------------------------------------------- tensor values


def _walk_expr(node: ast.expr) -> Iterator[ast.AST]:
    """Sub-expressions of a test, not entering lambdas or comprehensions (they are other scopes)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield from _walk_expr(child)


def _tested_values(test: ast.expr) -> Iterator[ast.expr]:
    """The values Python turns into a bool in a test: operands of `not`/`and`/`or` and of value comparisons."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tested_values(test.operand)
    elif isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from _tested_values(v)
    elif isinstance(test, ast.Compare):
        if not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in test.ops):
            yield test.left
            yield from test.comparators
    else:
        yield test


def _tensor_valued(env: _Env, node: ast.expr) -> bool:
    """Certainly a tensor: a reduction method (`y.sum()`, `mask.any()`) or a tensor on a real object (`self.scale`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS:
        receiver = _resolve(env, node.func.value)
        return receiver is _MISSING or isinstance(receiver, torch.Tensor) or receiver is torch
    value = _resolve(env, node) if _chain(node) is not None else _MISSING
    return isinstance(value, torch.Tensor)


def _aug_form(node: ast.AugAssign) -> str:
    """`+= k`/`-= k` (k not 0) and `^= True` change the value every call; other operators may settle (`*= 1`)."""
    if isinstance(node.op, (ast.Add, ast.Sub)) and not _zero(node.value):
        return "step"
    if isinstance(node.op, ast.BitXor) and isinstance(node.value, ast.Constant) and node.value.value:
        return "step"
    return "selfref"


def _form(value: ast.expr, target: ast.expr) -> str:
    """How an assignment rewrites its target: `step` changes it every call (`x = x + 1`, `x = not x`), `selfref` reads
    it and may settle (`max(x, n)`, `x or d`, `Mode(x)`), `assign` does not read it."""
    text = ast.unparse(target)
    if not _reads_same(value, target):
        return "assign"
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not) and ast.unparse(value.operand) == text:
        return "step"
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.BitXor)):
        left, right = ast.unparse(value.left), ast.unparse(value.right)
        other = value.right if left == text else value.left if right == text and not isinstance(value.op, ast.Sub) \
            else None
        if other is not None and ast.unparse(other) != text and not _zero(other) and \
                (not isinstance(value.op, ast.BitXor) or isinstance(other, ast.Constant) and other.value):
            return "step"
    return "selfref"


def _literal(node: ast.expr) -> Any:
    """The value of a constant expression (`False`, `0`, `"x"`), else _MISSING."""
    return node.value if isinstance(node, ast.Constant) else _MISSING


def _zero(node: ast.expr) -> bool:
    """A literal that leaves a value unchanged when added (0, "", False)."""
    return isinstance(node, ast.Constant) and not node.value


def _reads_same(value: ast.expr, target: ast.expr) -> bool:
    """Whether the assigned expression reads the target it is assigned to (`x.n = x.n + 1`, `f = not f`)."""
    text = ast.unparse(target)
    return any(isinstance(n, (ast.Attribute, ast.Name, ast.Subscript)) and isinstance(getattr(n, "ctx", None), ast.Load)
               and ast.unparse(n) == text for n in ast.walk(value))


# --------------------------------------------------------------------------------------------- classification


def _scalar(value: Any) -> bool:
    return type(value) in (int, bool, str) or isinstance(value, enum.Enum)


def _classify_writes(state: ScanState) -> list[Hazard]:
    """Decide, with the real current values, which writes on the hot path are hazards; dormant ones are warnings
    unless the hot path itself may change their guard."""
    hot = {w.key for w in state.writes if w.guard is None and not _keeps_value(w)}
    out = []
    for w in state.writes:
        hazard = _write_hazard(w, state.reads)
        if hazard is not None and w.guard is not None and not w.guard.keys & hot:
            hazard = replace(hazard, certain=False, guard=", ".join(w.guard.guards))
        if hazard is not None:
            out.append(hazard)
    return out


def _write_hazard(w: _Write, reads: set[tuple[int, str]]) -> Hazard | None:
    """The hazard one write is: a certain counter/toggle (`step`), assigned or self-referencing state, a float."""
    value, read = w.value, w.key in reads or w.form != "assign"
    if isinstance(value, (torch.Tensor, nn.Module)) or not read or callable(value) and not _scalar(value):
        return None
    shown = f"{w.what} ({_SHOWN.get(type(value), type(value).__name__)})" if value is not _MISSING \
        else f"{w.what} (not set before the first call)"
    at = {"where": w.where, "region": w.region}
    if isinstance(value, (list, dict)):
        return Hazard(kind="container", what=shown, certain=False, **at) if w.form != "assign" else None
    if isinstance(value, float) or _dropout_p(w):
        return Hazard(kind="float", what=shown, **at)
    if _scalar(value) and w.form == "step":
        return Hazard(kind="counter", what=shown, note=_OLD_TORCH_NOTES.get(w.via, "") if torch_minor() < (2, 13)
                      else "", **at)
    if _scalar(value) and w.form == "selfref":
        return Hazard(kind="assigned", what=f"{shown}, rewritten from its own value,", **at)
    if _scalar(value) or value is None or value is _MISSING:
        return Hazard(kind="assigned", what=shown, certain=value is not _MISSING, **at)
    return None


_OLD_TORCH_NOTES = {
    "cell": "torch 2.11 does not guard a closure cell: no recompile there, but the compiled code keeps writing the "
            "first call's value",
    "class": "torch 2.11 breaks the graph on a class-attribute write and keeps writing the first call's value",
}
"""Measured on torch 2.11 (tests/contract/corpus h03, h05): still wrong, differently from 2.13's recompiles."""


def _keeps_value(w: _Write) -> bool:
    """A write of the constant the state already holds (`self.debug = False` while it is False)."""
    return w.literal is not _MISSING and type(w.literal) is type(w.value) and w.literal == w.value


def _dropout_p(w: _Write) -> bool:
    return isinstance(w.owner, nn.modules.dropout._DropoutNd) and w.key[1] == "p"


def _per_instance(state: ScanState, binding: Any) -> list[Hazard]:
    """A Python int/str read on `self` that differs between more instances of one region than Dynamo can cache."""
    out = []
    for (region, where, what), values in state.scalar_reads.items():
        distinct = {v for _, v in values}
        limit = binding.regions[region].region.recompile_limit or _recompile_limit()
        if len(distinct) > limit:
            out.append(Hazard(kind="per-instance", where=where, region=region,
                              what=f"{what} ({len(distinct)} distinct values, recompile limit {limit})"))
    return out


def _recompile_limit() -> int:
    return int(getattr(torch._dynamo.config, "recompile_limit", 8))
