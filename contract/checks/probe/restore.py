"""Put back what the probe and the user's step changed:

- the RNGs: the torch (CPU, and CUDA when initialised) and Python `random` states (`run` itself drops every
  compiled entry, puts Dynamo's config back and switches the probe's binding back to eager);
- every module of the model: buffers (values, or the tensor itself when its shape changed), train/eval flags,
  instance attributes holding `int`/`float`/`bool`/`str`/`None`, instance `list`/`dict`/`set` attributes (one level
  deep: their items are put back, the items themselves are not restored), hooks registered on it by the step
  (they are such dicts), and attributes, buffers, parameters and submodules the step *added* are deleted;
- the classes of the model's modules (their MRO, torch's own classes excluded): class attributes holding scalars or
  `list`/`dict`/`set` (one level deep) are put back, and such class attributes the step added are deleted;
- the Python modules defining those classes: module-level `int`/`float`/`bool`/`str`/`None` globals are put back,
  and such globals the step added are deleted.

Not restored: parameter values (the step must not train; lazy modules stay materialised), state inside plain Python
objects held by a module (`self.stats.n`), nested containers below the first level, globals of other modules (the
step's own module included, unless it also defines a model class), global hooks, files, environment variables and
anything outside the model.
"""

from __future__ import annotations

import copy
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from contract import _torch

_SCALARS = (int, float, bool, str, type(None))
_CONTAINERS = (list, dict, set)


@dataclass
class _Saved:
    """What `restore` puts back (see the module docstring)."""

    modules: list[tuple[nn.Module, dict[str, Any], dict[str, Any], dict[str, set[str]], dict[str, Any], bool]]
    """(module, instance attrs present, copies of container attrs, registry keys, buffer copies, training)."""
    classes: list[tuple[type, dict[str, Any], dict[str, Any]]]
    """(class, own scalar/container attrs, copies of the containers)."""
    globals: list[tuple[dict[str, Any], dict[str, Any]]]
    """(module globals, scalar globals)."""
    rng: tuple[Any, ...]
    """torch CPU, CUDA (or None) and Python `random` states."""


def snapshot(model: nn.Module) -> _Saved:
    """Everything `restore` puts back, taken before the probe applies the contract."""
    modules = []
    for m in model.modules():
        attrs = dict(vars(m))
        containers = _copies(attrs)
        slots = {slot: set(_torch.module_slot(m, slot)) for slot in _torch.MODULE_SLOTS}
        buffers = {
            k: (b.detach().clone() if b is not None else None) for k, b in _torch.module_slot(m, "_buffers").items()
        }
        modules.append((m, attrs, containers, slots, buffers, m.training))
    classes = []
    for cls in _user_classes(model):
        own = {k: v for k, v in vars(cls).items() if _tracked_name(k) and _tracked_value(v)}
        classes.append((cls, own, _copies(own)))
    scopes = []
    for name in dict.fromkeys(cls.__module__ for cls in _user_classes(model)):
        mod = sys.modules.get(name)
        if mod is not None and isinstance(getattr(mod, "__dict__", None), dict):
            scopes.append(
                (mod.__dict__, {k: v for k, v in mod.__dict__.items() if _tracked_name(k) and type(v) in _SCALARS})
            )
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return _Saved(
        modules=modules, classes=classes, globals=scopes, rng=(torch.get_rng_state(), cuda, random.getstate())
    )


def _user_classes(model: nn.Module) -> list[type]:
    """Classes of the model's modules and their bases, torch's own classes (and `object`) excluded."""
    out: dict[type, None] = {}
    for m in model.modules():
        for cls in type(m).__mro__:
            module = getattr(cls, "__module__", "") or ""
            if cls is not object and module != "builtins" and module.split(".")[0] != "torch":
                out[cls] = None
    return list(out)


def _tracked_name(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__"))


def _tracked_value(value: Any) -> bool:
    return type(value) in _SCALARS or isinstance(value, _CONTAINERS)


def _copies(attrs: dict[str, Any]) -> dict[str, Any]:
    """Shallow copies of the list/dict/set values (subclasses too, e.g. the OrderedDicts of hooks)."""
    out = {}
    for k, v in attrs.items():
        if isinstance(v, _CONTAINERS):
            try:
                out[k] = copy.copy(v)
            except Exception:  # a container subclass that cannot be copied: not restored
                continue
    return out


def restore(saved: _Saved) -> None:
    """Put back everything `snapshot` saved (module state, class and module scalars, RNG states)."""
    with torch.no_grad():
        for m, attrs, containers, slots, buffers, training in saved.modules:
            _restore_module(m, attrs, containers, slots, buffers)
            m.training = training
    for cls, own, containers in saved.classes:
        for k in [k for k, v in vars(cls).items() if k not in own and _tracked_name(k) and _tracked_value(v)]:
            _try(delattr, cls, k)
        for k, v in own.items():
            if vars(cls).get(k, _MISSING) is not v:
                _try(setattr, cls, k, v)
            if k in containers:
                _put_back(v, containers[k])
    for scope, scalars in saved.globals:
        for k in [k for k, v in scope.items() if k not in scalars and _tracked_name(k) and type(v) in _SCALARS]:
            del scope[k]
        for k, v in scalars.items():
            if scope.get(k, _MISSING) is not v:
                scope[k] = v
    cpu, cuda, py = saved.rng
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    random.setstate(py)


_MISSING = object()


def _restore_module(
    m: nn.Module, attrs: dict[str, Any], containers: dict[str, Any], slots: dict[str, set[str]], buffers: dict[str, Any]
) -> None:
    for slot, keys in slots.items():  # buffers, parameters, submodules the step registered
        table = _torch.module_slot(m, slot)
        for k in [k for k in table if k not in keys]:
            del table[k]
    for k in [k for k in vars(m) if k not in attrs]:  # plain attributes the step created
        del m.__dict__[k]
    for k, v in attrs.items():
        if (type(v) in _SCALARS or k in containers) and m.__dict__.get(k, _MISSING) is not v:
            m.__dict__[k] = v
        if k in containers:
            _put_back(v, containers[k])
    table = _torch.module_slot(m, "_buffers")
    for k, b in buffers.items():
        current = table.get(k)
        if b is not None and current is not None and current.shape == b.shape and current.dtype == b.dtype:
            current.copy_(b)
        else:
            table[k] = b


def _put_back(container: Any, saved: Any) -> None:
    """Put a list/dict/set's items back in place (identity kept), only when they changed."""
    if _same_items(container, saved):
        return
    if isinstance(container, dict):
        container.clear()
        container.update(saved)
    elif isinstance(container, list):
        container[:] = saved
    elif isinstance(container, set):
        container.clear()
        container.update(saved)


def _same_items(a: Any, b: Any) -> bool:
    """Same items by identity (or equal scalars); never calls a tensor's `__eq__`."""

    def same(x: Any, y: Any) -> bool:
        return x is y or (type(x) in _SCALARS and type(x) is type(y) and x == y)

    try:
        if isinstance(a, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return a == b
    except Exception:  # keys or items that do not compare: put back
        return False


def _try(fn: Callable, *args: Any) -> None:
    try:
        fn(*args)
    except (AttributeError, TypeError):  # a read-only class attribute (e.g. a metaclass slot): leave it
        pass
