"""The adapter for reading back compiles someone else made (private `torch._dynamo.eval_frame` internals, verified on
torch 2.11 to 2.15; the facts are in the notes on engine-owned compiles).

Why private: torch keeps no public record of how an object was compiled. `torch.compile(fn)` returns eval_frame's
`compile_wrapper` closure (`functools.wraps(fn)`, so `__wrapped__` is the callable) whose free variable `self` is the
Dynamo context (`.fullgraph`, `._dynamic`, `.callback`); the backend object is the innermost of the callback's
`_torchdynamo_orig_backend` chain: `_TorchCompileInductorWrapper` keeps the mode only expanded into `.config` (with the
options), `_TorchCompileWrapper` keeps `.compiler_name` and `.kwargs`. Where a compile lives:
- `torch.compile(module)`: an `OptimizedModule` (`._orig_mod`, `.dynamo_ctx`; its `forward` instance attribute is
  the wrapper), usually put in the parent in place of the module;
- `module.compile()`: the wrapper in `module._compiled_call_impl` (no wrapper object, paths unchanged);
- `obj.method = torch.compile(obj.method)` (Lightning's step methods, HF's `_compiled_call`): an instance attribute.
The expected settings are built the way `torch.compile` builds them (the same wrapper classes), so a mode compares
by its expansion. Every read degrades to "unknown", never to an exception.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; each read run on all five). Same
in all five: `compile_wrapper` in `eval_frame.py` with free variables `fn`, `self`, `callback`; the context's
`fullgraph`, `_dynamic`, `callback` and the `_torchdynamo_orig_backend` chain; `_TorchCompileInductorWrapper`
(`compiler_name`, `config`, `dynamic`; built as `(mode, options, dynamic)`) and `_TorchCompileWrapper`
(`compiler_name`, `kwargs`, `dynamic`; `(backend, mode, options, dynamic)`); `OptimizedModule` (`_orig_mod`,
`dynamo_ctx`, `forward` instance attribute); `DisableContext`. Differs, none breaking a read: 2.14+'s
`_TorchCompileWrapper` also keeps `torch.compile(name=)` in `kwargs["name"]` (not a setting compared here); on 2.14+
`module.compile()` of a torch.nn class really compiles (`wrap_inline(module._call_impl)`; on 2.11-2.13 Dynamo skips
it), which this reader finds the same way (`_compiled_call_impl` holds a `compile_wrapper` on every version).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from torch import nn

_WRAPPER = "compile_wrapper"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How one compile was asked for, as torch kept it (or as the contract asks for it, built the same way)."""

    backend: str
    """Backend name (`inductor`, `eager`, a registered name or a callable's `__name__`)."""
    options: tuple[tuple[str, Any], ...]
    """Inductor: the mode's expansion merged with the options, sorted; other backends: their mode/options kwargs."""
    fullgraph: bool | None
    """`fullgraph`, None when unknown."""
    dynamic: bool | None
    """`dynamic` (None is torch's automatic dynamic)."""

    def shown(self) -> str:
        """One line for a finding: `backend=inductor fullgraph=False dynamic=None options={...}`."""
        opts = "{" + ", ".join(f"{k}={v!r}" for k, v in self.options) + "}"
        return f"backend={self.backend} fullgraph={self.fullgraph} dynamic={self.dynamic} options={opts}"

    def differences(self, other: Settings) -> list[str]:
        """The fields that differ, each as `name: ours -> theirs`."""
        out = []
        for name in ("backend", "fullgraph", "dynamic", "options"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name} {_show(mine)} (contract) vs {_show(theirs)} (engine)")
        return out


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "{" + ", ".join(f"{k}={v!r}" for k, v in value) + "}"
    return repr(value)


@dataclass(frozen=True, kw_only=True)
class EngineCompile:
    """One compile found on a module: where it lives (to switch it off and back) and how it was asked for."""

    module: nn.Module
    """The module whose method is compiled (the `OptimizedModule`'s `_orig_mod`, not the wrapper)."""
    method: str
    """`forward` for a compiled module call, else the compiled method's name."""
    kind: str
    """`wrapper` (torch.compile(module)), `compile` (module.compile()) or `method` (a compiled method attribute)."""
    holder: Any
    """The object whose attribute holds the compiled callable."""
    attr: str
    """That attribute: `forward` of the wrapper, `_compiled_call_impl`, or the method's name."""
    compiled: Callable
    """The compiled callable as installed (put back by `restore`)."""
    eager: Callable | None
    """What runs the same code uncompiled (None: `_compiled_call_impl` unset, the module's own call)."""
    settings: Settings | None
    """How it was compiled; None when the backend object is not one torch.compile makes."""
    disabled: bool = False
    """A `torch.compiler.disable` wrapper, not a compile."""


def is_wrapper(fn: Any) -> bool:
    """Whether `fn` is eval_frame's `compile_wrapper` (what torch.compile returns; `torch.compiler.disable` returns
    eval_frame's `_fn` instead, on 2.11-2.15)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_name == _WRAPPER and code.co_filename.endswith("eval_frame.py")


def _cells(fn: Any) -> dict[str, Any]:
    """The wrapper's free variables by name (`fn`, `self`, `callback`)."""
    out: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return out


def context_of(fn: Any) -> Any | None:
    """The Dynamo context of a `compile_wrapper` (its free variable `self`), or None."""
    return _cells(fn).get("self") if is_wrapper(fn) else None


def is_disable(ctx: Any) -> bool:
    """A `torch.compiler.disable` context (it wraps the same way and compiles nothing)."""
    return any(c.__name__ == "DisableContext" for c in type(ctx).__mro__)


def settings_of(ctx: Any) -> Settings | None:
    """Read a Dynamo context's backend, options, fullgraph and dynamic; None for a backend torch.compile did not make."""
    backend = _innermost(getattr(ctx, "callback", None))
    if backend is None:
        return None
    name = getattr(backend, "compiler_name", None)
    if not isinstance(name, str):
        return None
    if hasattr(backend, "config"):  # _TorchCompileInductorWrapper
        options = dict(getattr(backend, "config", {}) or {})
    else:  # _TorchCompileWrapper: mode and options only when given
        kwargs = dict(getattr(backend, "kwargs", {}) or {})
        options = {**({"mode": kwargs["mode"]} if "mode" in kwargs else {}), **dict(kwargs.get("options") or {})}
    dynamic = getattr(backend, "dynamic", getattr(ctx, "_dynamic", None))
    fullgraph = getattr(ctx, "fullgraph", None)
    return Settings(
        backend=name,
        options=tuple(sorted(options.items())),
        fullgraph=bool(fullgraph) if fullgraph is not None else None,
        dynamic=dynamic if isinstance(dynamic, bool) else None,
    )


def _innermost(callback: Any) -> Any | None:
    """The backend object at the end of the callback's `_torchdynamo_orig_backend` chain (bounded walk)."""
    seen = 0
    while callback is not None and hasattr(callback, "_torchdynamo_orig_backend") and seen < 16:
        callback, seen = callback._torchdynamo_orig_backend, seen + 1
    return callback


def expected(backend: str, mode: str | None, options: dict[str, Any], fullgraph: bool, dynamic: Any) -> Settings:
    """The settings `torch.compile(backend=, mode=, options=, fullgraph=, dynamic=)` would keep (built by torch's own
    wrapper classes, so a mode is compared by its expansion)."""
    import torch

    dyn = None if dynamic == "auto" else dynamic
    maker = getattr(torch, "_TorchCompileInductorWrapper" if backend == "inductor" else "_TorchCompileWrapper")
    obj = maker(mode, dict(options) or None, dyn) if backend == "inductor" else maker(backend, mode, options, dyn)

    class _Ctx:
        callback = obj

    found = settings_of(_Ctx())
    assert found is not None  # the wrapper classes always carry compiler_name
    return Settings(backend=found.backend, options=found.options, fullgraph=fullgraph, dynamic=found.dynamic)


def expected_for(region: Any) -> Settings | None:
    """The settings a contract region's compile should have (`expected`), or None when torch refuses them (the
    settings check, CC1xx, says why)."""
    try:
        return expected(region.backend, region.mode, region.options, region.fullgraph, region.dynamic)
    except Exception:  # an unknown backend or option: reported by CC101-CC104
        return None


def compiles_in(model: nn.Module) -> Iterator[EngineCompile]:
    """Every compile (and compiler.disable) found on the modules of a tree, wrappers seen through."""
    for module in model.modules():
        if _is_optimized(module):
            found = _from_optimized(module)
            if found is not None:
                yield found
            continue
        yield from _from_module(module)


def _is_optimized(module: Any) -> bool:
    return any(c.__name__ == "OptimizedModule" for c in type(module).__mro__) and hasattr(module, "_orig_mod")


def _from_optimized(wrapper: Any) -> EngineCompile | None:
    """`torch.compile(module)`: the wrapper's `forward` attribute compiles `_orig_mod`'s call."""
    compiled = wrapper.__dict__.get("forward")
    ctx = getattr(wrapper, "dynamo_ctx", None)
    if ctx is None:
        return None
    orig = wrapper._orig_mod
    return EngineCompile(
        module=orig,
        method="forward",
        kind="wrapper",
        holder=wrapper,
        attr="forward",
        compiled=compiled if compiled is not None else orig.__call__,
        eager=orig.__call__,
        settings=settings_of(ctx),
        disabled=is_disable(ctx),
    )


def _from_module(module: nn.Module) -> Iterator[EngineCompile]:
    """`module.compile()` and compiled method attributes of one module."""
    impl = module.__dict__.get("_compiled_call_impl")
    if impl is not None and is_wrapper(impl):
        yield _found(module, "forward", "compile", "_compiled_call_impl", impl, None)
    for attr, value in list(module.__dict__.items()):
        if attr.startswith("__") or attr == "_compiled_call_impl" or not callable(value):
            continue
        inner = _compile_wrapper_in(value)
        if inner is not None:
            eager = getattr(inner, "__wrapped__", None)
            yield _found(module, method_of(eager, attr), "method", attr, value, eager)


_CALLS = ("__call__", "_call_impl", "_wrapped_call_impl", "forward")
"""Names of a compiled callable that mean the module's forward (HF's `torch.compile(self.__call__)`)."""


def method_of(fn: Any, default: str) -> str:
    """The module method a compiled callable runs: `forward` for the module's call, else the method's name."""
    name = getattr(getattr(fn, "__func__", None), "__name__", None)
    if name is None:
        return "forward" if isinstance(fn, nn.Module) else default
    return "forward" if name in _CALLS else name


def put(comp: EngineCompile, fn: Callable | None) -> None:
    """Install `fn` where the engine's compiled callable lives (its wrapper, `_compiled_call_impl`, the attribute);
    `eager`/`compiled` of the record switch it off and back, a raiser arms a `fail` breach."""
    setattr(comp.holder, comp.attr, fn)


def _compile_wrapper_in(fn: Any) -> Any | None:
    """The compile_wrapper a callable is, or wraps through `functools.wraps` layers (bounded)."""
    for _ in range(8):
        if fn is None:
            return None
        if is_wrapper(fn):
            return fn
        fn = getattr(fn, "__wrapped__", None)
    return None


def _found(module: nn.Module, method: str, kind: str, attr: str, compiled: Any, eager: Any) -> EngineCompile:
    inner = _compile_wrapper_in(compiled)
    ctx = context_of(inner)
    return EngineCompile(
        module=module,
        method=method,
        kind=kind,
        holder=module,
        attr=attr,
        compiled=compiled,
        eager=eager,
        settings=settings_of(ctx) if ctx is not None else None,
        disabled=ctx is not None and is_disable(ctx),
    )


def wrapper_frame_context(frame: Any) -> Any | None:
    """The Dynamo context of a `compile_wrapper` frame on the stack (its free variable `self`), for the monitor's
    check at a lazily compiling engine's first compile."""
    try:
        return frame.f_locals.get("self")
    except Exception:  # a frame whose locals cannot be read
        return None
