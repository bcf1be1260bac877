"""Adapter for the few private torch APIs the startup side needs (torch 2.11 to 2.15).

Why private: `nn.Module.compile()` keeps the compiled callable in `_compiled_call_impl`, and the only way to switch
a module back to eager in place (keeping its identity and state_dict keys) is to reset that attribute. Marking
argument dims dynamic uses `torch._dynamo.maybe_mark_dynamic`, which is documented but lives under `_dynamo`.
Both exist unchanged in torch 2.11 through 2.15. `compile_forward` uses Dynamo's trace rules (see there).
What the static scan (CC3xx) reads of Dynamo's trace rules and config lives in the sibling `contract/_torch_scan.py`.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (their sources; the behaviour claims run on
all five). Same in all five: every name read here (`_compiled_call_impl`, `nn.Module.compile()` as
`torch.compile(self._call_impl)`, `trace_rules.check`, `external_utils.wrap_inline`, `maybe_mark_dynamic`,
`config.get_type`, the custom-op registry, the exception classes, the module slots, the config modules' `_config`,
`_compile_ignored_keys`, `_cache_config_ignore_prefix`, the dispatch-mode stack). Differs, none breaking us:
`torch.compile` takes `recompile_limit` from 2.12 on (feature-detected); `nn.Module.compile()` of a torch.nn class
compiles nothing on 2.11-2.13 and its whole `_call_impl`, hooks included, on 2.14+ (`compile_forward` takes
`_compile_builtin` for those on every version, so the result is the same); a frame first called under a
TorchDispatchMode is skipped for good on 2.11-2.13, only for that call on 2.14+ (`active_dispatch_modes`); 2.15's
Inductor config is an implication module (`numerics` implies three keys), whose raw values and defaults read as before.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch
from torch import nn


def set_forward_call(module: nn.Module, fn: Callable | None) -> None:
    """Make `module(...)` run `fn` (None: the plain eager `_call_impl`)."""
    module._compiled_call_impl = fn


def compile_forward(module: nn.Module, kwargs: dict[str, Any]) -> Callable:
    """Compile `module(...)` in place, as `nn.Module.compile()` does, and return the installed callable.

    `nn.Module.compile()` alone compiles nothing for torch.nn's own classes (`nn.Linear`, `nn.Sequential`...):
    Dynamo's trace rules skip their frames. Those go through `_compile_builtin` instead, so the module keeps its
    type and state_dict keys.
    """
    from torch._dynamo import trace_rules

    if _skipped_by_dynamo(trace_rules, type(module).forward):
        set_forward_call(module, _compile_builtin(module, kwargs))
    else:
        module.compile(**kwargs)
    installed = forward_call(module)
    if installed is None:  # nn.Module.compile() always installs one; a torch that does not is unsupported
        raise RuntimeError(f"torch {torch.__version__}: nn.Module.compile() installed no compiled callable")
    return installed


def _compile_builtin(module: nn.Module, kwargs: dict[str, Any]) -> Callable:
    """Compile a torch.nn class's forward as `nn.Module.compile()` does a user class's: the module's hooks run eager in
    `_call_impl` and only the forward is traced. Why: `torch.compile(module)` traces
    `external_utils.wrap_inline(module)`, hooks included, and FSDP2's hooks are `torch._dynamo.disable`d (2 graph breaks
    per sharded block, the whole block then running eager; measured on torch 2.13; 2.14+'s own `nn.Module.compile()` of
    a torch.nn class traces `wrap_inline(module._call_impl)`, hooks included, too). So `module.forward` becomes an
    instance attribute that runs the forward through `wrap_inline` (a frame Dynamo traces, torch 2.11-2.15) while a call
    is installed (`_compiled_call_impl`, here the plain bound `_call_impl`), eager otherwise. The compiled function's
    `__wrapped__` is the module's bound forward (the runtime monitor attributes compiles by it).

    Its `__module__` is put back to `external_utils` (where its code's globals live): `functools.wraps` in
    `wrap_inline` copied the forward's (`torch.nn.modules.linear`), and a precompiled entry
    (`torch._dynamo.config.caching_precompile`, `CompilePackage.install`) installs its compiled functions into
    `sys.modules[fn.__module__]`, so the loaded bytecode raised `NameError: name '__compiled_fn_..' is not defined` at
    its first call (measured on 2.15.0; with the fix the demo's `lm_head` loads and runs on 2.11.0, 2.12.1, 2.14.1
    and 2.15.0; nothing else reads the attribute).
    """
    from torch._dynamo import external_utils

    eager = _eager_forward(module)
    inline = external_utils.wrap_inline(eager)
    inline.__wrapped__ = types.MethodType(type(module).forward, module)  # type: ignore[attr-defined]
    inline.__module__ = external_utils.__name__
    compiled = torch.compile(inline, **kwargs)

    def forward(*args: Any, **kw: Any) -> Any:
        return (compiled if module._compiled_call_impl is not None else eager)(*args, **kw)

    forward._contract_eager = eager  # type: ignore[attr-defined]
    forward.__wrapped__ = eager  # type: ignore[attr-defined]  # inspect.signature: the forward's parameters
    module.forward = forward
    return types.MethodType(type(module)._call_impl, module)


def _eager_forward(module: nn.Module) -> Callable:
    """What `module(...)` calls as its forward when eager: the instance's own `forward` (accelerate's offload
    partial), the one an earlier `_compile_builtin` replaced, or the class's, bound."""
    own = module.__dict__.get("forward")
    if own is None:
        return types.MethodType(type(module).forward, module)
    return getattr(own, "_contract_eager", own)


def _skipped_by_dynamo(trace_rules: Any, forward: Any) -> bool:
    """Whether Dynamo's trace rules skip the class's `forward` (torch.nn's own classes). The class's, not the
    instance's: accelerate's offload hooks replace `module.forward` with a `functools.partial`, which the rules
    cannot place (they assert on an object with no source file)."""
    try:
        return bool(trace_rules.check(forward))
    except AssertionError:
        return False


def forward_call(module: nn.Module) -> Callable | None:
    """What `module(...)` runs instead of eager, if anything."""
    return module._compiled_call_impl


def mark_dynamic(value: Any, dims: tuple[int, ...]) -> None:
    """Mark dims of a tensor argument dynamic before Dynamo sees it (dims beyond its rank are skipped)."""
    if isinstance(value, torch.Tensor):
        for d in dims:
            if d < value.dim():
                torch._dynamo.maybe_mark_dynamic(value, d)


def is_mark_dynamic(fn: Any) -> bool:
    """`torch._dynamo.mark_dynamic` / `maybe_mark_dynamic` (torch 2.11-2.15): a user declaring a dim dynamic."""
    import torch._dynamo

    return any(fn is getattr(torch._dynamo, n, None) for n in ("mark_dynamic", "maybe_mark_dynamic"))


def supports_compile_kwarg(name: str) -> bool:
    """Whether this torch's `torch.compile` accepts a keyword (e.g. `recompile_limit`: not on 2.11, there from 2.12)."""
    import inspect

    return name in inspect.signature(torch.compile).parameters


# Settings validation (CC1xx) and cache switches (CC2xx). `torch.compiler.list_backends` and
# `torch._inductor.list_mode_options` / `list_options` are documented; `config.get_type` is private (ConfigModule,
# torch 2.11-2.15) and is exactly what `torch.compile` uses to type-check `options`, so we mirror it here.


def compile_backends() -> list[str]:
    """Every backend name `torch.compile` accepts now, including registered custom and entry-point backends."""
    return list(torch.compiler.list_backends(exclude_tags=None))


def inductor_modes() -> list[str]:
    """Modes `torch.compile(mode=)` accepts with the inductor backend."""
    from torch._inductor import list_mode_options

    return list(list_mode_options())


def inductor_option_types() -> dict[str, Any]:
    """Option name -> declared type, as `torch.compile` checks `options` (names with `_`, not `-`)."""
    from torch._inductor import config, list_options

    get_type = getattr(config, "get_type", None)
    if get_type is None:  # no declared types: check nothing rather than guess (None = unchecked)
        return dict.fromkeys(list_options())
    return {name: get_type(name) for name in list_options()}


# Custom operators (CC601). `torch.library.custom_op` objects (`CustomOpDef`, its `_abstract_fn` and the `OPDEFS`
# registry) live in private `torch._library.custom_ops`; `torch._C._dispatch_has_kernel_for_dispatch_key` is the
# dispatcher's own view of whether an op has a Meta (fake) kernel. A `custom_op` always registers a Meta shim that
# raises when no fake is registered, so for those the registry's `_abstract_fn` is the truth. Same in torch 2.11-2.15.


def op_names(obj: Any) -> tuple[str, ...] | None:
    """Overload names (`ns::op[.overload]`) of a custom-op object, OpOverloadPacket or OpOverload; None otherwise."""
    from torch._library.custom_ops import CustomOpDef

    if isinstance(obj, CustomOpDef):
        return (obj._qualname,)
    if isinstance(obj, torch._ops.OpOverload):
        return (obj.name(),)
    if isinstance(obj, torch._ops.OpOverloadPacket):
        return tuple(getattr(obj, name).name() for name in obj.overloads())
    return None


def is_op_namespace(obj: Any) -> bool:
    """`torch.ops` or one of its namespaces (`torch.ops.myns`): attribute access there resolves operators."""
    return isinstance(obj, (torch._ops._Ops, torch._ops._OpNamespace))


def has_fake_impl(name: str) -> bool:
    """Whether tracing can compute this overload's output metadata (fake/meta kernel, or no outputs at all)."""
    from torch._library import custom_ops

    qualname = name.split(".", 1)[0]
    opdef = custom_ops.OPDEFS.get(qualname)
    if opdef is not None:
        return opdef._abstract_fn is not None or not opdef._opoverload._schema.returns
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(name, "Meta"))
    except RuntimeError:
        return True  # unknown to the dispatcher: not ours to judge (precision over recall)


# Dynamic probe (CC4xx). The probe reads Dynamo's evidence through the runtime monitor (`monitor/_dynamo.py` is the
# one reader); what stays here is the config snapshot it restores and telling a compile failure from a user error:
# every error Dynamo raises while tracing or compiling (InternalTorchDynamoError, TorchRuntimeError from fake-tensor
# propagation, BackendCompilerFailed, Unsupported under fullgraph, UserError) derives from
# `torch._dynamo.exc.TorchDynamoException` (torch 2.11-2.15; 2.15's new `CompileOnOneRankUnsupported` too), as does a
# recompile-limit hit under `fail_on_recompile_limit_hit` (`FailOnRecompileLimitHit`, checked by name: a plain
# `Exception`, not a subclass, on 2.11-2.15).


def is_compile_failure(exc: BaseException) -> bool:
    """Whether an exception came from torch.compile itself (tracing or the backend), not from the user's own code."""
    from torch._dynamo import exc as dynamo_exc

    base = getattr(dynamo_exc, "TorchDynamoException", None)
    limit = getattr(dynamo_exc, "FailOnRecompileLimitHit", None)
    kinds = tuple(k for k in (base, limit) if isinstance(k, type))
    return bool(kinds) and isinstance(exc, kinds)


def dynamo_config() -> dict[str, Any]:
    """Snapshot of `torch._dynamo.config`, restored by `restore_dynamo`."""
    import torch._dynamo

    return torch._dynamo.config.get_config_copy()


def restore_dynamo(config: dict[str, Any]) -> None:
    """Drop every compiled cache entry and guard (`torch._dynamo.reset()`) and put the config back."""
    import torch._dynamo

    torch._dynamo.reset()
    now = torch._dynamo.config.get_config_copy()
    for key, value in config.items():  # only changed keys: setting deprecated ones warns
        if now.get(key) != value:
            setattr(torch._dynamo.config, key, value)


# Probe restore. `nn.Module` keeps parameters, buffers, submodules and hooks in private dicts (`_parameters`,
# `_buffers`, `_modules`, `_forward_hooks`, `_forward_pre_hooks`); their names are unchanged since torch 1.x and are
# the same on 2.11-2.15. Read with getattr so a module-like object without them is simply skipped.

MODULE_SLOTS = ("_parameters", "_buffers", "_modules")
"""nn.Module's private registries (name -> tensor / module)."""


def module_slot(module: nn.Module, slot: str) -> dict[str, Any]:
    """One of `MODULE_SLOTS` of a module (empty when absent)."""
    table = getattr(module, slot, None)
    return table if isinstance(table, dict) else {}


HOOK_SLOTS = {
    "_forward_pre_hooks": "forward pre-hook",
    "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook",
    "_backward_hooks": "backward hook",
}
"""nn.Module's private hook tables (handle id -> hook) and the kind each holds. A hook a compiled graph did not see
when it was traced is not called by it, and Dynamo does not guard these tables: forward and full backward hooks
added to a submodule after compile are silently skipped (seen on torch 2.11-2.15: no recompile, no call)."""


def hook_ids(module: nn.Module) -> set[tuple[str, int]]:
    """(kind, handle id) of the module's forward and backward hooks and pre-hooks."""
    ids: set[tuple[str, int]] = set()
    for slot, kind in HOOK_SLOTS.items():
        table = getattr(module, slot, None)
        ids |= {(kind, i) for i in table} if isinstance(table, dict) else set()
    return ids


def active_dispatch_modes() -> list[str]:
    """Class names of the TorchDispatchModes active now (`FlopCounterMode`...): under one, Dynamo runs compiled code
    eager without a record (torch 2.11-2.15). A frame first called under one is marked skipped for good on 2.11-2.13
    (never compiled afterwards, pytorch#190286); on 2.14+ only that call is skipped (`apply_to_code=False`) and the next
    call outside the mode compiles. The mode stack is private (`torch.utils._python_dispatch`, torch 2.11-2.15)."""
    from torch.utils import _python_dispatch

    stack: Callable[[], list[Any]] = getattr(_python_dispatch, "_get_current_dispatch_mode_stack", list)
    return [type(mode).__name__ for mode in stack()]


# Rank agreement (CC8xx). What ranks compare is read from torch's own config modules (`ConfigModule._config` entries
# and their defaults, `_compile_ignored_keys`, Inductor's `_cache_config_ignore_prefix`: the keys its FX-graph cache
# key ignores), all private, same in 2.11-2.15 (2.15's Inductor config, an `_ImplicationConfigModule`, keeps raw
# values and defaults: an implied value is not a change, its source is); a module lacking them contributes nothing
# rather than failing.

_CONFIG_MODULES = {
    "dynamo": "torch._dynamo.config",
    "inductor": "torch._inductor.config",
    "functorch": "torch._functorch.config",
    "compiler": "torch.compiler.config",
}
"""Config sections the ranks compare, by the name their components carry (`config.inductor.max_autotune`)."""


def compile_config_changes() -> dict[str, str]:
    """`section.key` -> value of every compile-relevant config entry that differs from torch's default (what this
    process set in Python or through an environment variable), excluding keys torch marks as not affecting compiles."""
    import importlib

    out: dict[str, str] = {}
    for section, module_name in _CONFIG_MODULES.items():
        try:
            module = importlib.import_module(module_name)
            entries, now = module._config, module.get_config_copy()
        except (ImportError, AttributeError):
            continue
        for key, value in now.items():
            entry = entries.get(key)
            if entry is not None and not _config_ignored(module, key) and value != entry.default:
                out[f"{section}.{key}"] = canonical(value)
    return out


def _config_ignored(module: Any, key: str) -> bool:
    if key in (getattr(module, "_compile_ignored_keys", None) or ()):
        return True
    return any(key == p or key.startswith(p + ".") for p in getattr(module, "_cache_config_ignore_prefix", ()) or ())


def canonical(value: Any, limit: int = 200) -> str:
    """A value as the same text in every process (sets sorted, callables by name, no addresses), bounded."""
    if isinstance(value, (set, frozenset)):
        text = "{" + ", ".join(sorted(canonical(v) for v in value)) + "}"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(canonical(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{canonical(k)}: {canonical(v)}" for k, v in sorted(value.items(), key=str)) + "}"
    elif callable(value):
        text = f"<{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__name__)}>"
    elif value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
    else:
        text = f"<{type(value).__module__}.{type(value).__qualname__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def versions() -> dict[str, str]:
    """The versions compiled code depends on: torch, its CUDA, triton, Python."""
    import platform
    from importlib import metadata

    out = {"torch": torch.__version__, "cuda": str(torch.version.cuda), "python": platform.python_version()}
    for name in ("triton", "pytorch-triton"):
        try:
            out["triton"] = metadata.version(name)
            break
        except metadata.PackageNotFoundError:
            continue
    return out


def compiler_collectives() -> bool:
    """Whether Dynamo makes ranks agree on automatic-dynamic decisions (`enable_compiler_collectives`)."""
    import torch._dynamo

    return bool(getattr(torch._dynamo.config, "enable_compiler_collectives", False))


def pgo_job_id() -> str | None:
    """The job identity profile-guided dynamic-shape state is keyed by (`torch.compiler.config.job_id`)."""
    job = getattr(torch.compiler.config, "job_id", None)
    return str(job) if job else None


# `compile-contract upgrade` reports how many guards each compile installed. Dynamo writes it on the compile's
# `CompilationMetrics` record (`guard_count`, torch 2.11-2.15), kept in a bounded deque of recent records that
# `torch._dynamo.reset()` does not clear; the records are read right after each step, before the deque turns over.


def guard_counts() -> dict[str, int]:
    """Compile id (`0/1`) -> guards its compiled code checks, for the recent compiles Dynamo kept a record of."""
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return {}
    out: dict[str, int] = {}
    for rec in get_compilation_metrics():
        count = getattr(rec, "guard_count", None)
        if isinstance(count, int):
            out[str(getattr(rec, "compile_id", ""))] = count
    return out
