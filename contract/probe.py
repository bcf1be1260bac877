"""Dynamic probe: apply the contract with a cheap backend, run the user's step, and read Dynamo's own evidence.

Evidence is what Dynamo reports, never an eager attribute diff: each compile (attributed to the region instance
whose compiled callable is on the stack, with the probe step it happened in), the guard failures that caused each
recompile, the graph breaks Dynamo logged during each compile (reason and user source line), frames Dynamo gave up
on, recompile-limit hits, and forward hooks that appeared on region modules after compile.

Afterwards the probe puts back what it and the step changed:

- torch: every compiled entry is dropped (`torch.compiler.reset()`), Dynamo's config is put back, the probe's
  binding is switched back to eager, and the torch (CPU, and CUDA when initialised) and Python `random` RNG states
  are restored;
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
import dataclasses
import logging
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

from contract import _torch
from contract.apply import apply, set_call
from contract.binding import Binding, bind
from contract.load import Contract

_SCALARS = (int, float, bool, str, type(None))
_CONTAINERS = (list, dict, set)


@dataclass(kw_only=True, frozen=True)
class GraphBreak:
    """One graph break Dynamo logged."""

    reason: str
    """Dynamo's reason text (first line: the kind of break)."""
    location: str = ""
    """`file:line` of the user code that broke (innermost user frame), "" when Dynamo gave none."""

    @property
    def site(self) -> tuple[str, str]:
        """What makes two breaks the same break: the reason's first line and the source line."""
        return first_line(self.reason), self.location


def first_line(text: str) -> str:
    """First non-blank line, whitespace folded."""
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


@dataclass(kw_only=True)
class Compile:
    """One Dynamo compile attributed to a region instance."""

    region: str
    """Region name."""
    path: str
    """Module path of the instance whose compiled callable was compiling."""
    compile_id: str
    """Dynamo's `frame_id/frame_compile_id`."""
    reasons: list[str]
    """Guard failures that caused it (empty for a first compile of a frame)."""
    breaks: list[GraphBreak] = field(default_factory=list)
    """Graph breaks Dynamo logged while it compiled."""
    step: int = 0
    """Index of the probe step during which it compiled."""


@dataclass(kw_only=True)
class ProbeResult:
    """What the probe observed over its steps."""

    steps: int
    """Steps run (fewer than asked when the step raised)."""
    compiles: list[Compile] = field(default_factory=list)
    """Every compile attributed to a region, in order."""
    limit_hits: list[tuple[str, str]] = field(default_factory=list)
    """(region, Dynamo's warning text) for each recompile-limit hit."""
    hooks_added: list[tuple[str, str]] = field(default_factory=list)
    """(region, module path) of modules that gained forward hooks after compile."""
    error: str | None = None
    """The step's exception, one line, when it raised."""


class _Recorder(logging.Handler):
    """Compile callbacks and the recompile-limit log handler, attributing each event to a region instance."""

    def __init__(self, binding: Binding) -> None:
        super().__init__(level=logging.WARNING)
        self.binding = binding
        self.result = ProbeResult(steps=0)
        self.step = 0
        self.open: list[tuple[Any, Any, list[str]]] = []

    def start(self, args: Any) -> None:
        self.open.append((self._target(), _torch.graph_break_mark(), _torch.compiling_reasons()))

    def end(self, args: Any) -> None:
        if not self.open:
            return
        target, mark, reasons = self.open.pop()
        if target is None:
            return
        breaks = [GraphBreak(reason=r, location=loc) for r, loc in _torch.graph_breaks_since(mark)]
        self.result.compiles.append(Compile(region=target.region, path=target.path, reasons=reasons, breaks=breaks,
                                            compile_id=str(getattr(args, "compile_id", "")), step=self.step))

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, str) and record.msg.startswith("torch._dynamo hit config."):
            target = self._target()
            if target is not None:
                self.result.limit_hits.append((target.region, " ".join(record.getMessage().split())[:300]))

    def _target(self) -> Any:
        owner = _torch.compiling_owner()
        return self.binding.region_of(*owner) if owner is not None else None


def probe_contract(contract: Contract, backend: str) -> Contract:
    """The same regions compiled with the probe's backend (mode and options are Inductor's: dropped)."""
    regions = tuple(dataclasses.replace(r, backend=backend, mode=None, options={}) if r.enabled else r
                    for r in contract.regions)
    return dataclasses.replace(contract, regions=regions)


def probe(contract: Contract, model: nn.Module, step: Callable[[nn.Module, int], Any], *, steps: int,
          backend: str = "eager") -> ProbeResult:
    """Run `steps` iterations of `step(model, i)` under the contract compiled with `backend`, then restore."""
    binding, _ = bind(probe_contract(contract, backend), model)
    config, saved = _torch.dynamo_config(), _snapshot(model)
    hooks = _hook_ids(binding)
    recorder = _Recorder(binding)
    logger = logging.getLogger(_torch.LIMIT_LOGGER)
    torch.compiler.reset()
    marker = _torch.newest_compile_record()
    _torch.add_compile_callbacks(recorder.start, recorder.end)
    logger.addHandler(recorder)
    try:
        _apply_and_run(recorder, binding, model, step, steps)
        _count_skipped(recorder.result, _torch.skipped_frames(marker))
        recorder.result.hooks_added = _new_hooks(binding, hooks)
    finally:
        logger.removeHandler(recorder)
        _torch.remove_compile_callbacks(recorder.start, recorder.end)
        for target in binding.targets():
            set_call(target, None)
        _torch.restore_dynamo(config)
        _restore(saved)
    return recorder.result


def _apply_and_run(recorder: _Recorder, binding: Binding, model: nn.Module, step: Callable, steps: int) -> None:
    result = recorder.result
    try:
        apply(binding)
    except Exception as exc:  # a compile setting torch rejects: CC1xx reports it; the probe says it could not run
        result.error = f"apply raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return
    for i in range(steps):
        recorder.step = i
        try:
            step(model, i)
        except Exception as exc:  # the user's step may raise anything: reported as a finding
            result.error = f"step {i} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            return
        result.steps = i + 1


def _count_skipped(result: ProbeResult, skipped: dict[str, tuple[str, str]]) -> None:
    """A frame Dynamo gave up on (runs eager, no break logged) is a graph break of its compile."""
    for c in result.compiles:
        if c.compile_id in skipped and not c.breaks:
            reason, location = skipped[c.compile_id]
            c.breaks = [GraphBreak(reason=f"frame skipped, runs eager: {first_line(reason)}", location=location)]


def _hook_ids(binding: Binding) -> dict[tuple[str, str], set[int]]:
    """Forward (pre-)hook ids of every module inside each region's targets."""
    out: dict[tuple[str, str], set[int]] = {}
    for t in binding.targets():
        for name, sub in t.module.named_modules():
            path = ".".join(p for p in (t.path, name) if p) or "<root>"
            out[(t.region, path)] = _torch.forward_hook_ids(sub)
    return out


def _new_hooks(binding: Binding, before: dict[tuple[str, str], set[int]]) -> list[tuple[str, str]]:
    after = _hook_ids(binding)
    return [key for key, ids in after.items() if ids - before.get(key, set())]


@dataclass
class _Saved:
    """What `_restore` puts back (see the module docstring)."""

    modules: list[tuple[nn.Module, dict[str, Any], dict[str, Any], dict[str, set[str]], dict[str, Any], bool]]
    """(module, instance attrs present, copies of container attrs, registry keys, buffer copies, training)."""
    classes: list[tuple[type, dict[str, Any], dict[str, Any]]]
    """(class, own scalar/container attrs, copies of the containers)."""
    globals: list[tuple[dict[str, Any], dict[str, Any]]]
    """(module globals, scalar globals)."""
    rng: tuple[Any, ...]
    """torch CPU, CUDA (or None) and Python `random` states."""


def _snapshot(model: nn.Module) -> _Saved:
    """Everything `_restore` puts back, taken before the probe applies the contract."""
    modules = []
    for m in model.modules():
        attrs = dict(vars(m))
        containers = _copies(attrs)
        slots = {slot: set(_torch.module_slot(m, slot)) for slot in _torch.MODULE_SLOTS}
        buffers = {k: (b.detach().clone() if b is not None else None)
                   for k, b in _torch.module_slot(m, "_buffers").items()}
        modules.append((m, attrs, containers, slots, buffers, m.training))
    classes = []
    for cls in _user_classes(model):
        own = {k: v for k, v in vars(cls).items() if _tracked_name(k) and _tracked_value(v)}
        classes.append((cls, own, _copies(own)))
    scopes = []
    for name in dict.fromkeys(cls.__module__ for cls in _user_classes(model)):
        mod = sys.modules.get(name)
        if mod is not None and isinstance(getattr(mod, "__dict__", None), dict):
            scopes.append((mod.__dict__, {k: v for k, v in mod.__dict__.items()
                                          if _tracked_name(k) and type(v) in _SCALARS}))
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
    return _Saved(modules=modules, classes=classes, globals=scopes,
                  rng=(torch.get_rng_state(), cuda, random.getstate()))


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


def _restore(saved: _Saved) -> None:
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


def _restore_module(m: nn.Module, attrs: dict[str, Any], containers: dict[str, Any], slots: dict[str, set[str]],
                    buffers: dict[str, Any]) -> None:
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
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b
    except Exception:  # keys or items that do not compare: put back
        return False


def _try(fn: Callable, *args: Any) -> None:
    try:
        fn(*args)
    except (AttributeError, TypeError):  # a read-only class attribute (e.g. a metaclass slot): leave it
        pass
