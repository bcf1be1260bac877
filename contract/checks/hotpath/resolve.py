"""Resolving names and values: what an expression in user code refers to, read on the real objects (module instances,
the function's globals, closure cells and defaults) without running descriptors or user code."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from contract import _torch
from contract.checks.hotpath.fields import hints, tensor_hint
from contract.checks.hotpath.model import MISSING, FunctionNode, Prop
from contract.checks.hotpath.source import bound_names, declared_names, loop_stored_names, parse_source, user_code


@dataclass(frozen=True)
class CallArgs:
    """What a call site passes, resolved on the real objects: (value, taint) per position and keyword; `rest` is the
    taint of `*args`/`**kwargs` spread into the call. Values are MISSING where the caller's expression is a local."""

    positional: tuple[tuple[Any, str], ...] = ()
    keywords: tuple[tuple[str, Any, str], ...] = ()
    rest: str = ""
    marks: tuple[tuple[int | str, str], ...] = ()
    """What the loop walk knows of an argument it cannot resolve, by position or keyword: `scalar` (a Python number
    or string), `sized` (a tensor whose size changes between calls), `none` (None at some calls only), `length` (a
    list whose length changes between calls), `record` (a record the step built)."""

    def key(self) -> tuple[Any, ...]:
        """Identity of the bound values for the visit cache (scalars by value, objects by id)."""
        vals = [*(("", v, t) for v, t in self.positional), *self.keywords]
        bound = tuple((k, v if type(v) in (int, str, bool) else id(v), t) for k, v, t in vals)
        return (*bound, self.rest, self.marks)


class Display(dict[str, Any]):
    """A dict display a caller passes (`compute_loss(model, {"input_ids": ids})`): its keys are known, so a
    `**spread` of it passes exactly those keywords; values the scan does not know are MISSING. Once changed other
    than by assigning a key (`update`, `pop`), its keys are unknown (`opaque`)."""

    opaque = False

    def written(self, key: str, value: Any, assigned: bool) -> None:
        """The walked code wrote `d[key]` (its value, or MISSING), or changed the dict some other way."""
        if assigned and key.startswith("'") and key.endswith("'"):
            self[key[1:-1]] = value
        else:
            self.opaque = True


ENTRY = CallArgs(rest="some")
"""A function the engine calls (a region's method, a hook): every argument but the bound object is an input."""


@dataclass(kw_only=True)
class Env:
    """How names resolve inside one visited function."""

    fn: types.FunctionType
    owner: Any
    self_name: str | None
    local: set[str]
    declared: set[str]
    defaults: dict[str, Any]
    loops: dict[str, ast.expr] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    """Parameters bound to the real object the caller passed (never rebound in the body)."""
    taint: dict[str, str] = field(default_factory=dict)
    """Names whose value may differ between calls: `some`, or `every` (changes on each call, e.g. the step's `i`)."""
    tensors: set[str] = field(default_factory=set)
    """Names that hold a tensor for certain where the walk stands: parameters annotated as tensors (`mask: torch.Tensor
    | None`) and locals last assigned a tensor value (`tensors.assigned_kinds`)."""
    origins: dict[str, frozenset[tuple[int, str]]] = field(default_factory=dict)
    """Locals bound to a constant read from Python state (`use_cache = ... else self.config.use_cache`): that state's
    (container id, name), so a test on the local is a test on the state."""
    aliases: dict[str, ast.expr] = field(default_factory=dict)
    """Locals bound to a real container through an attribute chain (`kwargs = self.attn.extra_kwargs`): a mutation
    through the local is one of the attribute it names."""
    marks: dict[str, str] = field(default_factory=dict)
    """Parameters the caller marked (`CallArgs.marks`): `scalar`, `sized` or `none`."""
    changing: dict[tuple[int, str], str] | None = None
    """For the loop walk: state it has seen the loop advance ((container id, name) -> taint level), shared by the
    whole walk, so a value read back from it (`model.step = self.global_step`) changes too."""

    @classmethod
    def of(cls, fn: types.FunctionType, owner: Any, node: FunctionNode, call: CallArgs | None = None) -> Env:
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        self_name = params[0] if params and owner is not None else None
        declared = set(declared_names(node, ast.Global) | declared_names(node, ast.Nonlocal))
        sig_defaults = dict(zip(params[len(params) - len(fn.__defaults__ or ()) :], fn.__defaults__ or (), strict=True))
        sig_defaults.update(fn.__kwdefaults__ or {})
        env = cls(
            fn=fn,
            owner=owner,
            self_name=self_name,
            local=set(bound_names(node) - declared),
            declared=declared,
            defaults=sig_defaults,
        )
        env.bind(node, params[1:] if self_name else params, call or CallArgs())
        return env

    def bind(self, node: FunctionNode, positional: list[str], call: CallArgs) -> None:
        """Map a call's arguments to parameters; unpassed ones keep their defaults, the rest take `call.rest`."""
        rebound = loop_stored_names(node)  # elsewhere the walk unbinds a parameter where it is rebound
        names = positional + [a.arg for a in node.args.kwonlyargs]
        marked = dict(call.marks)
        self.marks = {n: marked[i] for i, n in enumerate(positional) if i in marked}
        self.marks.update({k: m for k, m in marked.items() if isinstance(k, str)})
        passed: dict[str, tuple[Any, str]] = dict(zip(positional, call.positional, strict=False))
        passed.update({k: (v, t) for k, v, t in call.keywords if k in names})
        for name in names:
            value, taint = passed.get(name, (MISSING, call.rest))
            if name in passed:
                self.defaults.pop(name, None)
            elif not call.rest and type(self.defaults.get(name, MISSING)) in (int, str, bool, type(None)):
                value = self.defaults[name]  # not passed by a call the scan sees whole: the default it runs with
            if value is not MISSING and name not in rebound:
                self.args[name] = value
            elif tensor_hint(hints(self.fn).get(name)):
                self.tensors.add(name)  # until the walk sees it rebound to something else
            if taint:
                self.taint[name] = taint
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None and call.rest:
                self.taint[extra.arg] = call.rest

    def nested(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Env:
        """The env of a function defined inside this one: its own names are local, free names resolve as here."""
        nonlocal_ = declared_names(node, ast.Nonlocal)
        own = bound_names(node) - nonlocal_ - declared_names(node, ast.Global)
        return Env(
            fn=self.fn,
            owner=self.owner,
            self_name=None if self.self_name in own else self.self_name,
            local=set(own | (self.local - {self.self_name}) | (nonlocal_ & self.local)),
            declared=set(declared_names(node, ast.Global) | (nonlocal_ - self.local)),
            defaults={k: v for k, v in self.defaults.items() if k not in own},
            args={k: v for k, v in self.args.items() if k not in own},
            taint={k: v for k, v in self.taint.items() if k not in own},
            tensors=self.tensors - own,
            changing=self.changing,
        )

    def root(self, name: str) -> Any:
        """The object a bare name refers to, or MISSING for locals and unknowns."""
        if name == self.self_name:
            return self.owner
        if name in self.args:
            return self.args[name]
        if name in self.defaults and isinstance(self.defaults[name], (dict, list, set)):
            return self.defaults[name]
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or (), strict=False))
        if name in cells:
            try:
                return cells[name].cell_contents
            except ValueError:
                return MISSING
        if name in self.local:
            return MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, MISSING)

    def is_default(self, name: str) -> bool:
        """Whether a bare name is a mutable default argument the call did not replace (shared by every call)."""
        return name in self.defaults and isinstance(self.defaults[name], (dict, list, set)) and name not in self.args

    def slot(self, name: str) -> tuple[Any, str] | None:
        """(namespace, key) a `global`/`nonlocal` name is stored in, for writes to bare names."""
        if name not in self.declared:
            return None
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or (), strict=False))
        if name in cells:
            return cells[name], "cell_contents"
        return self.fn.__globals__, name


def static_get(obj: Any, name: str) -> Any:
    """An attribute without running descriptors: module parameters/buffers/submodules, instance dict, class."""
    if obj is MISSING:
        return MISSING
    if isinstance(obj, nn.Module):
        for slot in _torch.MODULE_SLOTS:
            table = _torch.module_slot(obj, slot)
            if name in table:
                return table[name]
    if isinstance(obj, types.ModuleType):
        return getattr(obj, name, MISSING)
    inst = getattr(obj, "__dict__", None)
    if isinstance(inst, dict) and name in inst:
        return inst[name]
    try:
        attr = inspect.getattr_static(obj, name)
    except AttributeError:
        return MISSING
    if isinstance(attr, property):
        return Prop(attr)
    if isinstance(attr, classmethod):  # bound to the class, as Python binds it: `cls` is not the first argument
        return types.MethodType(attr.__func__, obj if isinstance(obj, type) else type(obj))
    if isinstance(attr, staticmethod):
        return attr.__func__
    if type(attr).__name__ in ("member_descriptor", "getset_descriptor"):
        try:
            return getattr(obj, name)
        except Exception:  # a slot not set yet
            return MISSING
    return attr


def chain(node: ast.expr) -> tuple[str, list[str]] | None:
    """`a.b.c` -> ("a", ["b", "c"]); None for anything that is not a plain attribute chain."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Call) and is_type_of_self(node):
        return "__class__", attrs[::-1]
    return (node.id, attrs[::-1]) if isinstance(node, ast.Name) else None


def is_type_of_self(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    )


def resolve(env: Env, node: ast.expr) -> Any:
    """The real object an expression names, or MISSING."""
    if isinstance(node, ast.Call) and is_type_of_self(node) and isinstance(node.args[0], ast.Name):
        base = env.root(node.args[0].id)
        return type(base) if base is not MISSING else MISSING
    if isinstance(node, ast.Subscript):
        return item(resolve(env, node.value), static_key(env, node.slice))
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return getter_value(resolve(env, node.func))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        container = resolve(env, node.func.value)  # `kwargs.get("cache_params")` on a real dict: no code runs
        return item(container, static_key(env, node.args[0])) if type(container) is dict else MISSING
    parsed = chain(node)
    if parsed is None and isinstance(node, ast.Attribute):
        base = resolve(env, node.value)  # `model.layers[0].flag`
        return base if base is MISSING or isinstance(base, Prop) else static_get(base, node.attr)
    if parsed is None:
        return MISSING
    root, attrs = parsed
    inner = node
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    return follow(env.root(root) if root != "__class__" else resolve(env, inner), attrs)


def follow(obj: Any, attrs: list[str], depth: int = 0) -> Any:
    """`obj.a.b...` on the real objects, through properties that only return an attribute chain of their object;
    stops at any other property (a `Prop`) or unknown (MISSING)."""
    for n, a in enumerate(attrs):
        value = static_get(obj, a)
        if isinstance(value, Prop) and n < len(attrs) - 1 and depth < 8:
            value = property_value(value, obj, depth)
        if isinstance(value, Prop) or value is MISSING:
            return value
        obj = value
    return obj


def property_value(prop: Prop, obj: Any, depth: int = 0) -> Any:
    """What a property of user code returns when its getter only returns an attribute chain of its object
    (`def trainer(self): assert self._trainer is not None; return self._trainer`), read without calling it; the
    `Prop` itself for any other getter."""
    fget = prop.prop.fget
    if not isinstance(fget, types.FunctionType) or not user_code(fget) or fget.__code__.co_argcount != 1:
        return prop
    parsed = _returned_chain(fget)
    if parsed is None or parsed[0] != fget.__code__.co_varnames[0] or not parsed[1]:
        return prop
    return follow(obj, list(parsed[1]), depth + 1)


def getter_value(fn: Any) -> Any:
    """What an argument-free accessor returns (`def get_forward_context(): assert _ctx is not None; return _ctx`,
    the getter vLLM, SGLang and Megatron put in front of process-wide state), read from its globals without calling
    it; MISSING for anything else."""
    parsed = _getter_chain(fn)
    if parsed is None:
        return MISSING
    obj = follow(fn.__globals__[parsed[0]], list(parsed[1]))
    return MISSING if isinstance(obj, Prop) else obj


def getter_slot(fn: Any) -> tuple[int, str] | None:
    """The state an argument-free accessor returns as it stands (`return _forward_context`: the global), as a
    read/write key; None for a chain through attributes or anything else."""
    parsed = _getter_chain(fn)
    return (id(fn.__globals__), parsed[0]) if parsed is not None and not parsed[1] else None


def _getter_chain(fn: Any) -> tuple[str, tuple[str, ...]] | None:
    """The `global.attr...` an argument-free accessor of user code returns, its global present; None otherwise."""
    if not user_code(fn) or fn.__code__.co_argcount or fn.__code__.co_kwonlyargcount or fn.__closure__:
        return None
    parsed = _returned_chain(fn)
    return parsed if parsed is not None and parsed[0] in fn.__globals__ else None


@functools.lru_cache(maxsize=4096)
def _returned_chain(fn: types.FunctionType) -> tuple[str, tuple[str, ...]] | None:
    """The `name.attr...` a function's one `return` gives (asserts and docstrings aside), parsed once."""
    source = parse_source(fn)
    if source is None or not isinstance(source.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = [b for b in source.node.body if not isinstance(b, (ast.Assert, ast.Global, ast.Expr))]
    parsed = chain(body[0].value) if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value else None
    return None if parsed is None else (parsed[0], tuple(parsed[1]))


def item(container: Any, key: Any) -> Any:
    """`container[key]` for a module container, list, tuple or dict and a key known before the call; else MISSING."""
    if key is MISSING or container is MISSING:
        return MISSING
    try:
        if isinstance(container, (nn.ModuleList, nn.Sequential)) and type(key) is int:
            return list(container.children())[key]
        if isinstance(container, (nn.ModuleDict, dict)):
            return container[key] if key in container else MISSING
        if isinstance(container, (list, tuple)) and type(key) is int:
            return container[key]
    except (IndexError, KeyError, TypeError):
        return MISSING
    return MISSING


def class_holding(obj: Any, name: str) -> type | None:
    """The class an instance's attribute is read from when the instance does not hold it itself."""
    if isinstance(obj, (type, types.ModuleType)) or name in (getattr(obj, "__dict__", None) or {}):
        return None
    if isinstance(obj, nn.Module) and any(name in _torch.module_slot(obj, s) for s in _torch.MODULE_SLOTS):
        return None
    return next((k for k in type(obj).__mro__ if name in vars(k)), None)


def slot_of(parent: Any) -> Any:
    """The namespace a name lives in: a module's globals dict for a module object (a write to `mod.X` and a read of
    the global `X` inside `mod` are the same state)."""
    return vars(parent) if isinstance(parent, types.ModuleType) else parent


def parent_and_name(env: Env, target: ast.expr) -> tuple[Any, str, str] | None:
    """For a write target: (container object, key, shown name), resolved against real objects."""
    if isinstance(target, ast.Attribute):
        parent = resolve(env, target.value)
        if parent is MISSING or isinstance(parent, Prop):
            return None
        return slot_of(parent), target.attr, f"{type_name(parent)}.{target.attr}"
    if isinstance(target, ast.Subscript):
        parent = resolve(env, target.value)
        if not isinstance(parent, (dict, list)):
            return None
        key = static_key(env, target.slice)
        if key is MISSING:
            return parent, ANY_KEY, f"{ast.unparse(target)}"
        return parent, repr(key), f"{ast.unparse(target.value)}[{key!r}]"
    if isinstance(target, ast.Name):
        slot = env.slot(target.id)
        if slot is not None:
            return slot[0], slot[1], f"{'global' if isinstance(slot[0], dict) else 'nonlocal'} {target.id}"
        if env.is_default(target.id):
            return env.defaults[target.id], CONTENTS, f"default argument {target.id}"
    return None


ANY_KEY = "[*]"
"""The key of a subscript write whose index is not known statically (`self.hits[e] += 1`)."""
CONTENTS = "<contents>"
"""The key of a write to a container itself (a mutable default argument appended to)."""


def static_key(env: Env, node: ast.expr) -> Any:
    """A subscript index known before the call: a constant, a scalar on a real object (`self.key`), or the identity of
    a real object."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and resolve(env, node.func) is id:
        obj = resolve(env, node.args[0])  # `_callbacks[id(model)]`: a registry keyed by an object's identity
        return MISSING if obj is MISSING or isinstance(obj, Prop) else id(obj)
    value = resolve(env, node)
    return value if type(value) in (int, str, bool) else MISSING


def value_at(parent: Any, key: str) -> Any:
    if key == ANY_KEY:
        return any_value(parent)
    if isinstance(parent, dict):
        if key in parent:
            return parent[key]
        try:
            return parent.get(ast.literal_eval(key), MISSING)
        except (ValueError, SyntaxError, TypeError):
            return MISSING
    if isinstance(parent, list):
        try:
            return parent[int(key)]
        except (ValueError, IndexError):
            return MISSING
    return static_get(parent, key)


def any_value(container: dict | list) -> Any:
    """What an element at an unknown index holds: the first value when all values are of one type."""
    values = list(container.values() if isinstance(container, dict) else container)
    return values[0] if len({type(v) for v in values}) == 1 else MISSING


def type_name(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return obj.__name__ if isinstance(obj, type) else type(obj).__name__


def current_value(parent: Any, key: str) -> Any:
    """What a write's target holds now: a container itself for its CONTENTS, a closure cell's contents, an item or
    attribute (MISSING when unset)."""
    if key == CONTENTS:
        return parent
    return cell_value(parent) if type(parent).__name__ == "cell" else value_at(parent, key)


def cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return MISSING


MAX_ITEMS = 4096
"""Bound on the elements of one loop the scan binds its variable to (a generated model cannot make it run away)."""


def iter_values(env: Env, node: ast.expr) -> list[Any] | None:
    """The real objects a `for` loop binds its variable to: a module container's children, a list/tuple/set's
    elements, a dict's keys, `module.modules()`/`.children()`/`.parameters()`/`.buffers()`, `.values()`; None
    when not known. `enumerate(x)` and `.items()`/`.named_*()` yield pairs: see `pair_values`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        base = resolve(env, node.func.value)
        name = node.func.attr
        if isinstance(base, nn.Module) and name in ("modules", "children", "parameters", "buffers"):
            return list(getattr(base, name)())[:MAX_ITEMS]
        if isinstance(base, dict) and name == "values":
            return list(base.values())[:MAX_ITEMS]
        return None
    value = resolve(env, node)
    if isinstance(value, (nn.ModuleList, nn.Sequential)):
        return list(value.children())[:MAX_ITEMS]
    if isinstance(value, nn.ModuleDict):
        return list(value.keys())[:MAX_ITEMS]
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return list(value)[:MAX_ITEMS]
    return None


def pair_values(env: Env, node: ast.expr) -> list[tuple[Any, Any]] | None:
    """(first, second) per element for `enumerate(x)`, `d.items()`, `m.named_modules()`/`named_children()`/
    `named_parameters()`/`named_buffers()`."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name) and node.func.id == "enumerate" and len(node.args) == 1:
        items = iter_values(env, node.args[0])
        return None if items is None else list(enumerate(items))
    if isinstance(node.func, ast.Attribute) and not node.args:
        base = resolve(env, node.func.value)
        name = node.func.attr
        if isinstance(base, nn.Module) and name in (
            "named_modules",
            "named_children",
            "named_parameters",
            "named_buffers",
        ):
            return list(getattr(base, name)())[:MAX_ITEMS]
        if isinstance(base, (dict, nn.ModuleDict)) and name == "items":
            return list(base.items())[:MAX_ITEMS]
    return None
