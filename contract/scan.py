"""Static scan of every compiled region's hot path for Python state that makes Dynamo guard, recompile or break.

Starting from each target's method, the scan parses (once per code object) the source of every function the region
reaches: methods on `self`, submodules' `forward` (and `__call__` overrides), helpers, properties and registered
forward hooks. Names are resolved against the *real* objects (the module instances, the function's globals,
closure cells and defaults), so a finding says what the value is (`int`, `float`, tensor...), not what it looks
like. torch's own code is trusted and not parsed; code under `if not torch.compiler.is_compiling():` is skipped.
"""
from __future__ import annotations

import ast
import builtins
import enum
import inspect
import os
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
from torch import nn

_MISSING = object()
MAX_VISITS = 20_000
"""Bound on (function, instance) visits per scan: a generated model cannot make the scan run away."""
_TRUSTED = ("torch", "builtins", "functools", "typing", "collections", "contextlib", "abc", "enum", "dataclasses",
            "copy", "inspect", "warnings", "logging", "math", "operator", "itertools", "numpy", "einops")
"""Packages whose code is not parsed: Dynamo knows torch; the rest are not user state."""
_COMPILING = frozenset({"is_compiling", "is_torchdynamo_compiling", "is_dynamo_compiling", "is_exporting"})
_SHOWN = {int: "int", bool: "bool", str: "str", float: "float", type(None): "None"}


@dataclass(frozen=True, kw_only=True)
class Hazard:
    """One raw observation, turned into a Finding by `contract.rules.cc3xx`."""

    kind: str
    """`counter`, `assigned`, `float`, `graph-break`, `item-branch`, `env`, `dynamic-getattr`, `batchnorm`, `per-instance`."""
    where: str
    """`file:line` (or a module path for instance-level hazards)."""
    region: str
    """Region whose hot path reaches it."""
    what: str
    """Short description of the state or call, e.g. `HazardRouter.batches (int)`."""
    certain: bool = True
    """False when a name could not be resolved to a value (the finding is then a warning)."""


@dataclass(frozen=True)
class _Source:
    """A parsed function: its AST and where its lines are."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    file: str
    offset: int


@dataclass(kw_only=True)
class _Write:
    key: tuple[int, str]
    value: Any
    form: str
    where: str
    region: str
    what: str
    owner: Any


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
    seen: dict[tuple[str, str], Hazard] = {}
    for h in hazards:
        seen.setdefault((h.kind, h.where), h)
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


def _visit_callable(state: ScanState, fn: Any, owner: Any, region: str, depth: int = 0) -> None:
    """Visit a function reached on the hot path, with the object bound as its first argument (or None)."""
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    if isinstance(fn, types.MethodType):
        fn, owner = fn.__func__, fn.__self__
    fn = inspect.unwrap(fn, stop=lambda f: getattr(f, "_torchdynamo_disable", False)) if callable(fn) else fn
    if depth > 40 or state.visits >= MAX_VISITS or not _user_code(fn):
        return
    key = (fn.__code__, id(owner), region)
    if key in state.visited:
        return
    state.visited.add(key)
    state.visits += 1
    src = _source(state, fn)
    if src is not None:
        _Walker(state, src, _Env.of(fn, owner, src.node), region, depth).run()


def _visit_module(state: ScanState, module: nn.Module, region: str, depth: int, method: str = "forward") -> None:
    """A submodule called on the hot path: its method (and `__call__` override), or torch containers' children."""
    cls = type(module)
    if cls.__module__.split(".")[0] == "torch":
        if isinstance(module, (nn.Sequential, nn.ModuleList, nn.ModuleDict)):
            for child in module.children():
                _visit_module(state, child, region, depth + 1)
        return
    _visit_callable(state, getattr(cls, method, None), module, region, depth + 1)
    if method == "forward" and cls.__call__ is not nn.Module.__call__:
        _visit_callable(state, cls.__call__, module, region, depth + 1)


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
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args)]
        self_name = params[0] if params and owner is not None else None
        declared = {n for s in ast.walk(node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
        assigned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local = (assigned | {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}) - declared
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                local.add(extra.arg)
        sig_defaults = dict(zip(params[len(params) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
        sig_defaults.update(fn.__kwdefaults__ or {})
        return cls(fn=fn, owner=owner, self_name=self_name, local=local, declared=declared, defaults=sig_defaults)

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
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        parent = _resolve(env, target.value)
        if isinstance(parent, (dict, list)):
            return parent, repr(target.slice.value), f"{ast.unparse(target.value)}[{target.slice.value!r}]"
        return None
    if isinstance(target, ast.Name):
        slot = env.slot(target.id)
        if slot is not None:
            return slot[0], slot[1], f"{'global' if isinstance(slot[0], dict) else 'nonlocal'} {target.id}"
    return None


def _value(parent: Any, key: str) -> Any:
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


class _Walker(ast.NodeVisitor):
    """Walks one function's body once for one (function, instance) visit, emitting hazards and further visits."""

    def __init__(self, state: ScanState, src: _Source, env: _Env, region: str, depth: int) -> None:
        self.state, self.src, self.env, self.region, self.depth = state, src, env, region, depth

    def run(self) -> None:
        body = self.src.node.body
        for stmt in body if isinstance(body, list) else [body]:
            self.visit(stmt)

    def where(self, node: ast.AST) -> str:
        return f"{self.src.file}:{self.src.offset + node.lineno}"

    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True) -> None:
        self.state.hazards.append(Hazard(kind=kind, where=self.where(node), region=self.region, what=what,
                                         certain=certain))

    # nested definitions run later (or never): their bodies are visited only when called
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        eager_only = _compile_check(node.test)
        if eager_only != "body":
            for stmt in node.body:
                self.visit(stmt)
        if eager_only != "orelse":
            for stmt in node.orelse:
                self.visit(stmt)
        if eager_only is None:
            self._test(node.test)
            self.visit(node.test)

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

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._write(node.target, "aug", node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            form = "selfref" if _reads_same(node.value, target) else "assign"
            self._write(target, form, node)
        self.visit(node.value)
        for target in node.targets:
            if not isinstance(target, (ast.Attribute, ast.Name)):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._write(node.target, "selfref" if _reads_same(node.value, node.target) else "assign", node)
            self.visit(node.value)

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
        elif isinstance(container, (dict, list)) and isinstance(node.slice, ast.Constant):
            self.state.reads.add((id(container), repr(node.slice.value)))
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
            _visit_callable(self.state, value.prop.fget, parent, self.region, self.depth + 1)
        elif type(value) in (int, str) and isinstance(parent, nn.Module) and _chain(node) is not None \
                and _chain(node)[0] == self.env.self_name:
            key = (self.region, self.where(node), f"{type(parent).__name__}.{node.attr}")
            self.state.scalar_reads.setdefault(key, set()).add((id(parent), value))

    def _write(self, target: ast.expr, form: str, node: ast.AST) -> None:
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
        self.state.writes.append(_Write(key=(id(parent), key), value=value, form=form, where=self.where(node),
                                        region=self.region, what=what, owner=store))

    def _test(self, test: ast.expr) -> None:
        """Python control flow on a tensor's value: `.item()` / `.tolist()` in a condition breaks the graph."""
        for sub in ast.walk(test):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                    sub.func.attr in ("item", "tolist") and not sub.args:
                self.hazard("item-branch", sub, f"{ast.unparse(sub)[:60]} in a condition")
                return

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
        if isinstance(func, ast.Name) and func.id in self.env.loops and func.id in self.env.local:
            container = _resolve(self.env, self.env.loops[func.id])
            return self._call_children(container)
        if isinstance(func, ast.Subscript):
            return self._call_children(_resolve(self.env, func.value))
        callee = _resolve(self.env, func)
        self._callee(node, func, callee)

    def _call_children(self, container: Any) -> None:
        if isinstance(container, (nn.ModuleList, nn.ModuleDict, nn.Sequential)):
            for child in container.children():
                _visit_module(self.state, child, self.region, self.depth)

    def _callee(self, node: ast.Call, func: ast.expr, callee: Any) -> None:
        if callee is _MISSING:
            return
        if isinstance(callee, _Prop):
            return _visit_callable(self.state, callee.prop.fget, _resolve(self.env, func.value), self.region,
                                   self.depth + 1) if isinstance(func, ast.Attribute) else None
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
            return _visit_module(self.state, callee, self.region, self.depth)
        owner = None
        if isinstance(func, ast.Attribute):
            parent = _resolve(self.env, func.value)
            owner = parent if parent is not _MISSING and not isinstance(parent, (type, types.ModuleType)) else None
        if isinstance(func, ast.Attribute) and owner is not None and \
                inspect.getattr_static(type(owner), func.attr, None) is not callee:
            owner = None  # a function stored on the instance is not bound to it
        if isinstance(owner, nn.Module) and isinstance(callee, types.FunctionType):
            return _visit_module(self.state, owner, self.region, self.depth, method=func.attr)
        _visit_callable(self.state, callee, owner, self.region, self.depth + 1)


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


def _compile_check(test: ast.expr) -> str | None:
    """Which branch of an `if` runs only eagerly: `"body"` for `if not is_compiling()`, `"orelse"` for the reverse."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test
    if isinstance(inner, ast.Call):
        name = inner.func.attr if isinstance(inner.func, ast.Attribute) else getattr(inner.func, "id", "")
        if name in _COMPILING:
            return "body" if negated else "orelse"
    return None


def _reads_same(value: ast.expr, target: ast.expr) -> bool:
    """Whether the assigned expression reads the target it is assigned to (`x.n = x.n + 1`, `f = not f`)."""
    text = ast.unparse(target)
    return any(isinstance(n, (ast.Attribute, ast.Name, ast.Subscript)) and isinstance(getattr(n, "ctx", None), ast.Load)
               and ast.unparse(n) == text for n in ast.walk(value))


# --------------------------------------------------------------------------------------------- classification


def _scalar(value: Any) -> bool:
    return type(value) in (int, bool, str) or isinstance(value, enum.Enum)


def _classify_writes(state: ScanState) -> list[Hazard]:
    """Decide, with the real current values, which writes on the hot path are hazards."""
    out = []
    for w in state.writes:
        value, read = w.value, w.key in state.reads or w.form != "assign"
        if isinstance(value, (torch.Tensor, nn.Module)) or not read or callable(value) and not _scalar(value):
            continue
        shown = f"{w.what} ({_SHOWN.get(type(value), type(value).__name__)})" if value is not _MISSING \
            else f"{w.what} (not set before the first call)"
        if isinstance(value, float) or _dropout_p(w):
            out.append(Hazard(kind="float", where=w.where, region=w.region, what=shown))
        elif _scalar(value) and w.form != "assign":
            out.append(Hazard(kind="counter", where=w.where, region=w.region, what=shown))
        elif _scalar(value) or value is None or value is _MISSING:
            out.append(Hazard(kind="assigned", where=w.where, region=w.region, what=shown,
                              certain=value is not _MISSING))
    return out


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
