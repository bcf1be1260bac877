"""Calls on the hot path, as the walker meets them: callees are followed into user code (methods, helpers, submodules,
nested functions, `super()`), and calls that break the graph, read the environment or mutate containers are
recorded."""

from __future__ import annotations

import ast
import collections
import contextlib
import dataclasses
import inspect
import logging
import os
import types
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

import torch
from torch import nn

from contract import _torch
from contract.checks.hotpath.classify import form_of
from contract.checks.hotpath.conditions import walk_expr
from contract.checks.hotpath.flow import displayed, stronger, taint_of
from contract.checks.hotpath.model import MISSING, Cond, Prop, ScanState, Source
from contract.checks.hotpath.resolve import ANY_KEY, CallArgs, Display, Env, chain, resolve
from contract.checks.hotpath.tensors import tensor_valued


class Walk(Protocol):
    """What call handling needs of the walk (`walk.Walker`): where it is, what it records, how it follows callees."""

    state: ScanState
    src: Source
    env: Env
    region: str
    depth: int
    guard: Cond | None
    nested: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]

    items: dict[str, list[Any]]

    def where(self, node: ast.AST) -> str: ...
    def hazard(self, kind: str, node: ast.AST, what: str, certain: bool = True) -> None: ...
    def record_write(
        self, target: ast.expr, form: str, node: ast.AST, literal: Any = MISSING, value: ast.expr | None = None
    ) -> None: ...
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
        if any(_torch.is_disable_decorator(resolve(w.env, _decorator(d))) for d in w.nested[func.id].decorator_list):
            return w.hazard("graph-break", node, f"{func.id}() (defined under torch.compiler.disable)")
        return w.walk_nested(w.nested[func.id])
    if isinstance(func, ast.Name) and func.id in w.items and func.id not in w.env.args:
        for value in w.items[func.id][:MAX_ITEMS]:  # `for table, ids in zip(self.tables, ...): table(ids)`
            if isinstance(value, nn.Module):
                w.child_call(node, value)
                w.enter_module(value, call=marked(w, node))
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
    if target is not None and _torch.is_compiler_disabled(target[0]):
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
    if isinstance(func, ast.Attribute) and func.attr in mutators(resolve(w.env, func.value)):
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


def mutate(w: Walk, target: ast.expr, node: ast.Call) -> None:
    """`obj.items.append(...)`: a write to the container, also for a module global (no `global` needed)."""
    name = target.id if isinstance(target, ast.Name) else None
    form = "reset" if isinstance(node.func, ast.Attribute) and node.func.attr == "clear" else "mutate"
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
    name = break_calls().get(id(callee))
    if name is not None:
        if name != "next" or iterator_arg(w.env, node):
            w.hazard("graph-break", node, f"{name}()")
        return
    if callee is os.getenv or isinstance(func, ast.Attribute) and resolve(w.env, func.value) is os.environ:
        return w.hazard("env", node, f"{ast.unparse(func)}()")
    if logger_call(w.env, func, callee) and not w.state.branches:
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a logging.Logger method)")
    if callee is warnings.warn and not w.state.branches:  # Dynamo skips `warnings`: a break, like a Logger call
        return w.hazard("graph-break", node, f"{ast.unparse(func)}()")
    if _torch.is_compiler_disabled(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (torch.compiler.disable)")
    if _torch.untraceable_system_call(callee):
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() (a system call Dynamo does not trace)")
    why = _torch.torch_graph_break(callee)
    if why is not None:
        return w.hazard("graph-break", node, f"{ast.unparse(func)}() ({why})")
    if isinstance(callee, nn.Module) and _torch.is_compiler_disabled(getattr(type(callee), "forward", None)):
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


LOCK_MODULES = frozenset({"threading", "multiprocessing.synchronize"})
"""Synchronisation primitives: their Python `__enter__` acquires a C lock (`Semaphore`, `Condition`, a
multiprocessing `Lock`)."""
UNTRACED_CONTEXTS = (contextlib.suppress, contextlib.ExitStack)
"""Standard-library context managers Dynamo does not enter (each measured breaking the graph on torch 2.13)."""


def untraceable_context(env: Env, expr: ast.expr) -> str | None:
    """`with self.lock:` on an object Dynamo cannot enter (gb0142): one whose `__enter__` is C code outside torch
    (`threading.Lock`, a file), a lock of `threading`/`multiprocessing`, `contextlib.suppress`/`ExitStack`. It breaks
    the graph in a function the region calls and runs the region's own frame eager (measured on torch 2.13). torch's
    context managers (grad modes, autocast) and `contextlib.nullcontext` are known to Dynamo."""
    obj = resolve(env, expr)
    if obj is MISSING or isinstance(obj, Prop):
        return None
    cls = type(obj)
    enter = getattr(cls, "__enter__", None)
    module = str(getattr(cls, "__module__", "") or "")
    in_c = enter is not None and not isinstance(enter, types.FunctionType) and module.split(".")[0] != "torch"
    if not (in_c or module in LOCK_MODULES and enter is not None or isinstance(obj, UNTRACED_CONTEXTS)):
        return None
    return f"with {ast.unparse(expr)} (a {module}.{cls.__name__}: Dynamo cannot enter it)"


def torch_runs_arguments(callee: Any) -> bool:
    """A torch function that calls the functions it is given during the compiled call (`checkpoint(self._mlp, x)`,
    `torch.func.vmap(f)`, `torch.cond`); hook registration only stores them."""
    module = str(getattr(callee, "__module__", "") or "")
    name = str(getattr(callee, "__name__", "") or "")
    return (
        module.split(".")[0] == "torch" and not name.startswith("register_") and not _torch.is_disable_decorator(callee)
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


def logger_call(env: Env, func: ast.expr, callee: Any) -> bool:
    """A method of a `logging.Logger` instance: Dynamo breaks the graph on every one it was not told to ignore."""
    name = getattr(callee, "__name__", None)
    if not isinstance(func, ast.Attribute) or not name or getattr(logging.Logger, name, None) is not callee:
        return False  # not a Logger method: decided without resolving the receiver again
    owner = resolve(env, func.value)
    if not isinstance(owner, logging.Logger):
        return False
    ignored = _torch.ignored_logging_functions()
    return not {callee, getattr(owner, func.attr, None)} & ignored


def scalar_pull(env: Env, node: ast.Call) -> bool:
    """`t.item()` / `t.tolist()` on a value computed on the hot path (or a real tensor): a graph break wherever it
    stands (a condition is reported by the walk's test), unless Dynamo captures scalar outputs."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("item", "tolist") and not node.args):
        return False
    receiver = resolve(env, func.value)
    return (receiver is MISSING or isinstance(receiver, torch.Tensor)) and not _torch.captures_scalar_outputs()


def scalar_cast(env: Env, node: ast.Call, callee: Any) -> bool:
    """`int(t.max())`, `float(loss.sum())`: a certain tensor value turned into a Python number calls `.item()`, so it
    breaks the graph wherever it stands, unless Dynamo captures scalar outputs."""
    if len(node.args) != 1 or node.keywords or not any(callee is f for f in (int, float, bool)):
        return False
    return tensor_valued(env, node.args[0]) and not _torch.captures_scalar_outputs()


AUTOGRAD_METHODS = frozenset({"backward", "requires_grad_"})
"""Methods Dynamo does not trace (measured on 2.13: "Unsupported Tensor.backward() call"; `requires_grad_` on a tensor
or a module breaks too)."""


def autograd_call(env: Env, node: ast.Call) -> bool:
    """`loss.backward()`, `x.requires_grad_()` or `frozen.requires_grad_(False)` in compiled code (a training step
    compiled whole, a gradient penalty): a graph break. Counted on a tensor, a module or a local the scan cannot see."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in AUTOGRAD_METHODS:
        return False
    receiver = resolve(env, func.value)
    owners = (torch.Tensor, nn.Module) if func.attr == "requires_grad_" else torch.Tensor
    return receiver is MISSING or isinstance(receiver, owners)


DYNAMIC_SHAPE_OPS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount"})
"""Torch functions and tensor methods whose output shape depends on tensor values (Dynamo: "Dynamic shape operator")."""
MASK_FUNCTIONS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_not", "logical_and"})
"""Torch functions that return a boolean tensor for certain."""


def dynamic_shape_op(env: Env, node: ast.Call, callee: Any) -> bool:
    """`torch.nonzero(m)`, `m.nonzero()`, `torch.unique(ids)`, one-argument `torch.where(m)`: the graph breaks there
    unless Dynamo captures dynamic output shapes. A method counts on a tensor or on a local the scan cannot see."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if _torch.captures_dynamic_output_shapes():
        return False
    if name == "where":
        return callee is torch.where and len(node.args) == 1 and not node.keywords
    if name not in DYNAMIC_SHAPE_OPS:
        return False
    if callee is getattr(torch, name, None) or callee is getattr(torch.Tensor, name, None):
        return True
    receiver = resolve(env, func.value) if isinstance(func, ast.Attribute) else None
    return receiver is MISSING or isinstance(receiver, torch.Tensor)


def mask_index(env: Env, node: ast.Subscript, container: Any) -> bool:
    """`y[y > 0]`, `x[mask.bool()]`, `x[~torch.isnan(x)]`: reading through a boolean tensor mask has a data-dependent
    shape. Only a mask that is certainly a tensor counts (a comparison with a tensor or with the indexed value)."""
    if not isinstance(node.ctx, ast.Load) or _torch.captures_dynamic_output_shapes():
        return False
    if isinstance(container, (dict, list, tuple, str)):
        return False
    return _bool_mask(env, node.slice, node.value)


def _derived(side: ast.expr, value: ast.expr) -> bool:
    """A comparison side computed from the indexed value itself (`y`, `y.abs()`, `y.sum(-1)` for `y[...]`): the same
    kind of object, so when indexing it by a comparison is valid at all, the comparison is a tensor mask."""
    same = ast.dump(value)
    return any(ast.dump(sub) == same for sub in walk_expr(side))


def _bool_mask(env: Env, index: ast.expr, value: ast.expr) -> bool:
    """An index expression that is a boolean tensor for certain."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return _bool_mask(env, index.operand, value)
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _bool_mask(env, index.left, value) or _bool_mask(env, index.right, value)
    if isinstance(index, ast.Compare) and len(index.ops) == 1:
        if isinstance(index.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            return False
        return any(tensor_valued(env, side) or _derived(side, value) for side in (index.left, *index.comparators))
    if isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute):
        if index.func.attr == "bool" and not index.args and not index.keywords:
            return True
        name = index.func.attr
        return name in MASK_FUNCTIONS and resolve(env, index.func) is getattr(torch, name, None)
    return False


def iterator_arg(env: Env, node: ast.Call) -> bool:
    """`next(x)` breaks the graph when x is a Python iterator/generator kept on an object."""
    if not node.args:
        return False
    value = resolve(env, node.args[0])
    return isinstance(value, (types.GeneratorType, Iterator)) and not isinstance(value, (list, tuple, dict, str))
