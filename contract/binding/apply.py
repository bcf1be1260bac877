"""Apply a checked binding to the model in place, and switch regions between compiled and eager."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from contract import _distributed, _torch
from contract.binding.resolve import parameters
from contract.binding.targets import Binding, RegionBinding, Target


def apply(binding: Binding) -> Binding:
    """Compile (or keep eager) every target, from the same binding that was checked; an engine region compiles
    nothing: its targets only learn where the engine's compile lives (for the monitor's eager and fail actions)."""
    engine = None
    for rb in binding.regions.values():
        if rb.state != "unapplied":
            continue
        if rb.region.engine and rb.region.enabled:
            engine = engine if engine is not None else engine_compiles(binding.model)
            for target in rb.targets:
                target.engine = engine.get((id(target.module), target.method))
            rb.state = "engine"
            continue
        for target in rb.targets:
            target.compiled = _watched(target, rb) if rb.region.enabled else _disable(target)
            set_call(target, target.compiled)
        rb.state = "compiled" if rb.region.enabled else "disabled"
    return binding


def engine_compiles(model: torch.nn.Module) -> dict[tuple[int, str], Any]:
    """(id(module), method) -> the compile someone else made of it (`torch.compiler.disable` wrappers left out)."""
    from contract import _compiled

    return {(id(c.module), c.method): c for c in _compiled.compiles_in(model) if not c.disabled}


def _watched(target: Target, rb: RegionBinding) -> Callable:
    """`_compile`, noting on the target what the wrap found in torch's precompile cache (when precompile is on)."""
    from contract import _caches

    if not _caches.caching_precompile():
        return _compile(target, rb)
    with _caches.precompile_watch() as watch:
        fn = _compile(target, rb)
    target.precompile = watch.load
    return fn


def _compile(target: Target, rb: RegionBinding) -> Callable:
    """`module.compile()` for forward (keeps type and state_dict keys), `torch.compile(bound)` otherwise."""
    region, module = rb.region, target.module
    if target.method == "forward":
        fn = _torch.compile_forward(module, region.compile_kwargs())
    else:
        fn = _compile_method(module, target.method, region.compile_kwargs())
    if region.dynamic_dims:
        fn = _marking(fn, parameters(getattr(module, target.method)) or [], region.dynamic_dims)
    return fn


def _compile_method(module: torch.nn.Module, method: str, kwargs: dict[str, Any]) -> Callable:
    """`torch.compile` of the bound method; one FSDP2 already wraps (`register_fsdp_forward_method`) is compiled
    inside that wrapper, whose hooks Dynamo cannot trace (2 graph breaks per call, measured on torch 2.13)."""
    inner = _distributed.fsdp_forward_method(module, method)
    if inner is None:
        return torch.compile(getattr(module, method), **kwargs)
    return _distributed.register_fsdp_method(module, method, torch.compile(inner, **kwargs))


def _disable(target: Target) -> Callable:
    """`enabled = false`: the method stays eager even when an outer compiled region calls it."""
    return torch.compiler.disable(getattr(target.module, target.method))


def _marking(fn: Callable, params: list[str], dims: dict[str, tuple[int, ...]]) -> Callable:
    """Mark the named arguments' dims dynamic before each call reaches Dynamo (only regions with dynamic_dims)."""
    where = [(name, params.index(name) if name in params else None, d) for name, d in dims.items()]

    def call(*args: Any, **kwargs: Any) -> Any:
        for name, index, d in where:
            value = (
                kwargs.get(name)
                if name in kwargs
                else (args[index] if index is not None and index < len(args) else None)
            )
            _torch.mark_dynamic(value, d)
        return fn(*args, **kwargs)

    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


def set_call(target: Target, fn: Callable | None) -> None:
    """Make calls of the target run `fn`; None restores the method it had before apply."""
    module, method = target.module, target.method
    if target.via_call_impl:
        _torch.set_forward_call(module, fn)
    elif fn is not None:
        setattr(module, method, fn)
    elif target.instance_attr is not None:
        setattr(module, method, target.instance_attr)
    else:
        module.__dict__.pop(method, None)


def unapply(binding: Binding) -> None:
    """Undo `apply`: the contract's regions run their methods as before; the engine's regions keep its compiles."""
    for name, rb in binding.regions.items():
        if rb.region.engine and rb.region.enabled:
            if rb.state in ("eager", "guarded"):  # a breach action switched the engine's compiles: put them back
                restore(binding, name)
            continue
        for target in rb.targets:
            set_call(target, None)
        rb.state = "unapplied"


def set_eager(binding: Binding, region: str) -> None:
    """Region-scoped fallback: this region's targets run their original, uncompiled callables (an engine region's
    where its compile was found)."""
    rb = binding.regions[region]
    for target in rb.targets:
        if rb.region.engine:
            _put_engine(target, lambda c: c.eager)
        else:
            set_call(target, None)
    rb.state = "eager"


def set_guard(binding: Binding, region: str, make: Callable[[Target], Callable]) -> None:
    """Install a callable built per target (e.g. one that raises) in place of the region's calls."""
    rb = binding.regions[region]
    for target in rb.targets:
        if rb.region.engine:
            _put_engine(target, lambda c, t=target: make(t))  # type: ignore[misc]
        else:
            set_call(target, make(target))
    rb.state = "guarded"


def restore(binding: Binding, region: str) -> None:
    """Switch a region back to what apply installed (an engine region: the engine's compiles)."""
    rb = binding.regions[region]
    for target in rb.targets:
        if rb.region.engine:
            _put_engine(target, lambda c: c.compiled)
        else:
            set_call(target, target.compiled)
    rb.state = "engine" if rb.region.engine else "compiled" if rb.region.enabled else "disabled"


def _put_engine(target: Target, choose: Callable[[Any], Callable | None]) -> None:
    """Switch an engine region's target where the engine's compile lives; a target whose compile was not found
    (an engine that compiles lazily, before its first compile) keeps running what the engine installs."""
    from contract import _compiled

    if target.engine is not None:
        _compiled.put(target.engine, choose(target.engine))
