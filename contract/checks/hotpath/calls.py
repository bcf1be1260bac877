"""Calls on the hot path, as the walker meets them: callees are followed into user code (methods, helpers, submodules,
nested functions, `super()`), and calls that break the graph, read the environment or mutate containers are
recorded."""

from __future__ import annotations

import ast
import collections
import dataclasses
import inspect
import os
import types
import warnings
from contextlib import AbstractContextManager
from typing import Any, Protocol

from torch import nn

from contract import _torch, _torch_scan
from contract.checks.hotpath.breaks import (
    autograd_call,
    break_calls,
    dynamic_shape_op,
    io_call,
    iterator_arg,
    logger_call,
    random_pattern,
    scalar_cast,
    scalar_pull,
)
from contract.checks.hotpath.classify import form_of
from contract.checks.hotpath.conditions import walk_expr
from contract.checks.hotpath.flow import displayed, stronger, taint_of
from contract.checks.hotpath.model import MISSING, Cond, Prop, ScanState, Source
from contract.checks.hotpath.resolve import ANY_KEY, CallArgs, Display, Env, chain, resolve


class Walk(Protocol):
    """What call handling needs of the walk (`walk.Walker`): where it is, what it records, how it follows callees."""

    MODE: str
    state: ScanState
    src: Source
    env: Env
    region: str
    depth: int
    guard: Cond | None
    nested: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]

    items: dict[str, list[Any]]

    def where(self, node: ast.AST) -> str: ...
    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True, pattern: str = "") -> None: ...
    def record_write(
        self, target: ast.expr, form: str, node: ast.AST, literal: Any = MISSING, value: ast.expr | None = None
    ) -> None: ...
    def record_assign(self, target: ast.expr, value: ast.expr, node: ast.AST) -> None: ...
    def emit_write(
        self,
        parent: Any,
        key: str,
        what: str,
        form: str,
        node: ast.AST,
        literal: Any = MISSING,
        value: ast.expr | None = None,
    ) -> None: ...
    def enter(self, fn: Any, owner: Any, call: CallArgs | None = None) -> None: ...
    def enter_module(self, module: nn.Module, method: str = "forward", call: CallArgs | None = None) -> None: ...
    def walk_nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None: ...
    def special_call(self, node: ast.Call, callee: Any) -> bool: ...
    def child_call(self, node: ast.Call, child: nn.Module) -> None: ...
    def note_read(self, key: tuple[int, str], node: ast.AST) -> None: ...
    def each(self, name: str) -> AbstractContextManager[list[Any]]: ...
    def marks_of(self, node: ast.Call, skip: int = 0) -> tuple[tuple[int | str, str], ...]: ...
    def constructed(self, value: ast.expr) -> Any: ...


MUTATORS: dict[type, frozenset[str]] = {
    list: frozenset({"append", "extend", "insert", "pop", "remove", "clear"}),
    dict: frozenset({"update", "setdefault", "pop", "popitem", "clear"}),
    set: frozenset({"add", "update", "discard", "remove", "pop", "clear"}),
    collections.deque: frozenset({"append", "appendleft", "extend", "extendleft", "pop", "popleft", "clear"}),
}
"""Methods that change a list's (deque's) length, a dict's keys or a set's members, which Dynamo guards on."""


def mutators(container: Any) -> frozenset[str]:
    """The mutating methods of a container, subclasses included (`collections.Counter.update`)."""
    return next((names for cls, names in MUTATORS.items() if isinstance(container, cls)), frozenset())


MAX_ITEMS = 64
"""Elements of a loop whose method calls are followed one by one (more are alike: layers of one class)."""


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
            w.note_read((id(target), str(node.args[1].value)), node)
    if (
        isinstance(func, ast.Name)
        and func.id == "getattr"
        and len(node.args) >= 2
        and not isinstance(node.args[1], ast.Constant)
        and resolve(w.env, node.args[0]) is not MISSING
        and taint_of(w.env, node.args[1])
    ):
        w.hazard("dynamic-getattr", node, f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})")
    if isinstance(func, ast.Name) and func.id in w.nested:
        if any(
            _torch_scan.is_disable_decorator(resolve(w.env, _decorator(d))) for d in w.nested[func.id].decorator_list
        ):
            return w.hazard("graph-break", node, f"{func.id}() (defined under torch.compiler.disable)")
        return w.walk_nested(w.nested[func.id])
    if isinstance(func, ast.Name) and func.id in w.items and func.id not in w.env.args:
        for value in w.items[func.id][:MAX_ITEMS]:  # `for table, ids in zip(self.tables, ...): table(ids)`
            if isinstance(value, nn.Module):
                w.child_call(node, value)
                w.enter_module(value, call=marked(w, node))
            elif callable(value) and not isinstance(value, type):  # a list of functions or callable objects
                w.enter(value, None, marked(w, node))
        return
    if isinstance(func, ast.Name) and func.id in w.env.loops and func.id in w.env.local:
        container = resolve(w.env, w.env.loops[func.id])
        return call_children(w, container, marked(w, node), node)
    if isinstance(func, ast.Subscript) and isinstance(resolve(w.env, func.value), CONTAINERS):
        return call_children(
            w, resolve(w.env, func.value), marked(w, node), node
        )  # else the item itself: `self._getters[name]()`
    base = chain(func.value) if isinstance(func, ast.Attribute) else None
    if base is not None and base[0] in w.items and base[0] not in w.env.args:
        with w.each(base[0]) as values:  # `for table in self.tables: table.set_lr(lr)`: each element's method
            for value in values[:MAX_ITEMS]:
                w.env.args[base[0]] = value
                on_call(w, node)
        return
    target = super_target(w.env, func)
    if target is not None and _torch_scan.is_compiler_disabled(target[0]):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (torch.compiler.disable)")
    if target is not None:
        return w.enter(target[0], target[1], call_args(w.env, node))
    callee = resolve(w.env, func)
    if callee is MISSING and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        callee = getattr(w.constructed(func.value), func.attr, MISSING)  # `LLaMA(model).generate(...)`
    if w.special_call(node, callee):
        return
    if (
        any(callee is f for f in (setattr, object.__setattr__))
        and len(node.args) == 3
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return setattr_write(w, node)
    if isinstance(func, ast.Attribute) and func.attr in mutators(resolve(w.env, _aliased(w.env, func.value))):
        mutate(w, func.value, node)
    if scalar_pull(w.env, node) or scalar_cast(w.env, node, callee):
        w.hazard("item-branch", node, f"{ast.unparse(node)[:60]} (a tensor's value read into Python)")
    if autograd_call(w.env, node):
        w.hazard("graph-break", node, f"{ast.unparse(node)[:60]}")
    if dynamic_shape_op(w.env, node, callee) and not w.state.branches:
        w.hazard("dynamic-shape", node, f"{ast.unparse(node)[:60]}")
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(resolve(w.env, func.value), dict)
    ):
        w.note_read((id(resolve(w.env, func.value)), repr(node.args[0].value)), node)
    follow_call(w, node, func, callee)


def call_args(env: Env, node: ast.Call, skip: int = 0) -> CallArgs:
    """What a call passes: each argument's real object (constants included) and taint (a known object is the same
    every call: no taint); `*x`/`**x` spread theirs."""
    positional: list[tuple[Any, str]] = []
    rest = ""
    for arg in node.args[skip:]:
        if isinstance(arg, ast.Starred):
            rest = stronger(rest, _spread_taint(env, arg.value))
            break
        value = argument(env, arg)
        positional.append((value, _taint(env, arg, value)))
    keywords = []
    for kw in node.keywords:
        spread = resolve(env, kw.value) if kw.arg is None else None
        if displayed(spread):  # `model(**inputs)` with `inputs` a dict display the caller passed
            keywords += [(k, v, "" if v is not MISSING else "some") for k, v in spread.items()]
        elif kw.arg is None:
            rest = stronger(rest, _spread_taint(env, kw.value))
        else:
            value = argument(env, kw.value)
            keywords.append((kw.arg, value, _taint(env, kw.value, value)))
    return CallArgs(positional=tuple(positional), keywords=tuple(keywords), rest=rest)


def _taint(env: Env, node: ast.expr, value: Any) -> str:
    """An argument's taint: none for an object the scan knows (the same every call); a dict display the call builds
    changes with what it holds."""
    return "" if value is not MISSING and not isinstance(value, Display) else taint_of(env, node)


def marked(w: Walk, node: ast.Call, skip: int = 0) -> CallArgs:
    """`call_args` with what the walker knows of the arguments it cannot resolve (`Walk.marks_of`)."""
    return dataclasses.replace(call_args(w.env, node, skip), marks=w.marks_of(node, skip))


def _spread_taint(env: Env, node: ast.expr) -> str:
    """What `*x`/`**x` passes on: its own taint; an unknown expression that is not a plain name may hold anything."""
    return taint_of(env, node) if isinstance(node, ast.Name) else taint_of(env, node) or "some"


def argument(env: Env, node: ast.expr) -> Any:
    """The object an argument expression passes, where the scan knows it (a constant, a name on a real object)."""
    if isinstance(node, ast.Constant):
        return node.value
    if literal_scalars(node):  # `ranks=[0]`: a fresh container of constants, passed as its (immutable) items
        return tuple(ast.literal_eval(node))
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
        values = (v.value if isinstance(v, ast.Constant) else MISSING for v in node.values)  # literals only
        return Display({k.value: v for k, v in zip(node.keys, values, strict=True)})  # type: ignore[union-attr]
    value = resolve(env, node)
    return MISSING if isinstance(value, Prop) else value


def literal_scalars(node: ast.expr) -> bool:
    """A list, tuple or set display of constants (`[0]`, `("fp8", "bf16")`)."""
    return isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(isinstance(e, ast.Constant) for e in node.elts)


def _decorator(node: ast.expr) -> ast.expr:
    """The decorator itself, also when it is called with options (`@torch.compiler.disable(recursive=False)`)."""
    return node.func if isinstance(node, ast.Call) else node


def _aliased(env: Env, node: ast.expr) -> ast.expr:
    """The attribute chain a local alias of a container names (`kwargs` for `kwargs = self.attn.extra`)."""
    return env.aliases.get(node.id, node) if isinstance(node, ast.Name) else node


def _keyword_update(node: ast.Call) -> bool:
    """`d.update(a=x, b=y)`: named keys only (no positional mapping, no `**`)."""
    func = node.func
    named = bool(node.keywords) and all(k.arg is not None for k in node.keywords)
    return isinstance(func, ast.Attribute) and func.attr == "update" and not node.args and named


def mutate(w: Walk, target: ast.expr, node: ast.Call) -> None:
    """`obj.items.append(...)`: a write to the container, also for a module global (no `global` needed)."""
    name = target.id if isinstance(target, ast.Name) else None
    form = "reset" if isinstance(node.func, ast.Attribute) and node.func.attr == "clear" else "mutate"
    base = _aliased(w.env, target)  # `kwargs = self.attn.extra; kwargs.update(...)` writes `self.attn.extra`
    if _keyword_update(node):  # `d.update(a=x)` is `d["a"] = x`: the same keys on every call
        for kw in node.keywords:
            item = ast.copy_location(ast.Subscript(value=base, slice=ast.Constant(kw.arg), ctx=ast.Store()), node)
            w.record_assign(item, kw.value, node)
        return None
    if base is not target:
        return w.record_write(base, form, node)
    if name is not None and name not in w.env.local and name in w.env.fn.__globals__:
        w.emit_write(w.env.fn.__globals__, name, f"global {name}", form, node)
    else:
        w.record_write(target, form, node)


def setattr_write(w: Walk, node: ast.Call) -> None:
    """`setattr(obj, "name", value)` with a constant name is a write to `obj.name`."""
    name = node.args[1]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
        return
    target = ast.copy_location(ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Store()), node)
    value = node.args[2]
    w.record_write(
        target, form_of(value, target), node, value.value if isinstance(value, ast.Constant) else MISSING, value
    )


CONTAINERS = (nn.ModuleList, nn.ModuleDict, nn.Sequential)


def call_children(w: Walk, container: Any, call: CallArgs, node: ast.Call | None = None) -> None:
    """A call through a module container (`self.layers[i](x)`, `for layer in ...: layer(x)`): every child, each a
    call the walker may check (`child_call`: what eager code passes a compiled layer)."""
    if isinstance(container, CONTAINERS):
        for child in container.children():
            if node is not None:
                w.child_call(node, child)
            w.enter_module(child, call=call)


def follow_call(w: Walk, node: ast.Call, func: ast.expr, callee: Any) -> None:
    """Record a call that breaks the graph or reads the environment; else follow the callee into user code."""
    if callee is MISSING:
        return
    if isinstance(callee, Prop):
        return w.enter(callee.prop.fget, resolve(w.env, func.value)) if isinstance(func, ast.Attribute) else None
    if custom_op_without_fake(w, node, callee):
        return
    name = break_calls().get(id(callee))
    if name is not None:
        if name != "next" or iterator_arg(w.env, node):
            w.hazard("graph-break", node, f"{name}()", pattern=random_pattern(w.src.node, node, name, w.state.loops))
        return
    if callee is os.getenv or isinstance(func, ast.Attribute) and resolve(w.env, func.value) is os.environ:
        return w.hazard("env", node, f"{ast.unparse(func)}()")
    if logger_call(w.env, func, callee) and not w.state.branches:
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a logging.Logger method)")
    if io_call(w.env, func) and not w.state.branches:
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a method of an I/O object)")
    if callee is warnings.warn and not w.state.branches:  # Dynamo skips `warnings`: a break, like a Logger call
        return w.hazard("graph-break", node, f"{ast.unparse(func)}()")
    if _torch_scan.is_compiler_disabled(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (torch.compiler.disable)")
    if _torch_scan.untraceable_system_call(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a system call Dynamo does not trace)")
    if _torch_scan.skipped_torch_builtin(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a torch function Dynamo marks as skipped)")
    why = _torch_scan.torch_graph_break(callee) or _torch_scan.non_tensor_torch_call(callee)
    if why is not None:
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() ({why})")
    if isinstance(callee, nn.Module) and _torch_scan.is_compiler_disabled(getattr(type(callee), "forward", None)):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (its forward is under torch.compiler.disable)")
    if isinstance(callee, nn.Module):
        return w.enter_module(callee, call=marked(w, node))
    if torch_runs_arguments(callee):
        function_arguments(w, node)
    owner, skip = bound_to(w, node, func, callee)
    call = marked(w, node, skip)
    if (
        isinstance(owner, nn.Module)
        and isinstance(callee, types.FunctionType)
        and isinstance(func, ast.Attribute)
        and owner is resolve(w.env, func.value)
    ):
        return w.enter_module(owner, func.attr, call)
    w.enter(callee, owner, call)


def custom_op_without_fake(w: Walk, node: ast.Call, callee: Any) -> bool:
    """A custom operator called from compiled code (`torch.ops.ns.op(x)`, a `custom_op` object): recorded when it has
    no fake implementation (CC601: tracing it fails), certain when nothing the scan cannot decide keeps the call from
    running (`ScanState.branches`, `ScanState.maybe`, a dormant guard). True when recorded (nothing to follow)."""
    names = _torch.op_names(callee) if w.MODE == "hot" else None
    if not names or any(_torch.has_fake_impl(n) for n in names):
        return False
    certain = not w.state.branches and not w.state.maybe and w.guard is None
    w.hazard("custom-op", node, names[0], certain=certain)
    return True


def torch_runs_arguments(callee: Any) -> bool:
    """A torch function that calls the functions it is given during the compiled call (`checkpoint(self._mlp, x)`,
    `torch.func.vmap(f)`, `torch.cond`); hook registration only stores them."""
    module = str(getattr(callee, "__module__", "") or "")
    name = str(getattr(callee, "__name__", "") or "")
    return (
        module.split(".")[0] == "torch"
        and not name.startswith("register_")
        and not _torch_scan.is_disable_decorator(callee)
    )


def function_arguments(w: Walk, node: ast.Call) -> None:
    """Walk the user functions passed to such a call as called from here (a local def, a bound method, a function)."""
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, ast.Name) and arg.id in w.nested:
            w.walk_nested(w.nested[arg.id])
            continue
        fn = resolve(w.env, arg)
        if isinstance(fn, (types.FunctionType, types.MethodType)):
            w.enter(fn, None)


def bound_to(w: Walk, node: ast.Call, func: ast.expr, callee: Any) -> tuple[Any, int]:
    """The object a called function runs with as its first argument (`obj.method()`, `Cls.method(obj)`, a wrapper's
    `fn(*args)` passing its own), and how many positional arguments that consumed."""
    if not isinstance(func, ast.Attribute):
        return _spread_owner(w.env, node, callee), 0
    parent = resolve(w.env, func.value)
    plain = isinstance(inspect.getattr_static(parent, func.attr, None), types.FunctionType)
    if isinstance(parent, type) and plain and node.args:  # not a static/class method
        first = resolve(w.env, node.args[0])
        return (first, 1) if isinstance(first, parent) else (None, 0)
    if parent is MISSING or isinstance(parent, (type, types.ModuleType)):
        return None, 0
    if inspect.getattr_static(type(parent), func.attr, None) is not callee:
        return None, 0  # a function stored on the instance is not bound to it
    return parent, 0


def _spread_owner(env: Env, node: ast.Call, callee: Any) -> Any:
    """A wrapper walked with an object bound but no named first parameter (`def wrapper(*args, **kw)`) passes it on
    to the function it wraps through `fn(*args, ...)`."""
    if env.owner is None or env.self_name is not None or not isinstance(callee, types.FunctionType):
        return None
    first = node.args[0] if node.args else None
    vararg = getattr(getattr(env.fn, "__code__", None), "co_flags", 0) & inspect.CO_VARARGS
    return env.owner if vararg and isinstance(first, ast.Starred) and isinstance(first.value, ast.Name) else None


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


def dict_grows(env: Env, target: ast.Subscript, parent: Any, key: str) -> bool:
    """`d[len(d)] = v`, `d[i] = v` with a key that changes every call: the dict gains a key on every call."""
    if not (isinstance(parent, dict) and key == ANY_KEY):
        return False
    if not isinstance(target.value, (ast.Attribute, ast.Name)) or env.is_default(ast.unparse(target.value)):
        return False
    own = ast.unparse(target.value)
    reads_itself = any(ast.unparse(n) == own for n in walk_expr(target.slice))
    return reads_itself or taint_of(env, target.slice) == "every"
