"""Adapter for the private torch APIs the static scan (CC3xx) reads (torch 2.11 to 2.15); a sibling of
`contract/_torch.py`, split from it to keep files short. Everything else private the startup side reads stays there.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; each lookup and each graph break
below run on all five). Same in all five: the hook slots and global hook registries,
`_torchdynamo_disable`, `trace_rules.lookup` / `FORCE_SKIP_FILES` (`optim/lr_scheduler.py` alone), the optimizers'
`graph_break()` wrapper, `constant_fold_functions` / `_get_handlers`, `_BatchNorm` / `_DropoutNd`, every config key read
here with the same default, and every `is_compiling` alias. Differs: only the rule table's contents, read at run time
(torch C functions Dynamo skips: 69 on 2.11, 67 on 2.12 and 2.13, 68 on 2.14, 70 on 2.15; 2.11 also skips the autocast
setters such as `torch.set_autocast_enabled`), so no code here depends on the version.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import torch
from torch import nn

# Static scan (CC3xx). The scan reads modules without running them: forward hooks live in the private dicts
# `_forward_pre_hooks` / `_forward_hooks`, `torch.compiler.disable` marks functions with `_torchdynamo_disable`,
# BatchNorm and Dropout share the private bases `_BatchNorm` / `_DropoutNd`, the global recompile limit is
# `torch._dynamo.config.recompile_limit`, and `is_compiling()` has aliases in private modules. All unchanged in
# torch 2.11 through 2.15; each lookup degrades to "not found".


def forward_hooks(module: nn.Module) -> list[Any]:
    """The module's forward pre-hooks and forward hooks (callables), in registration order."""
    out: list[Any] = []
    for slot in ("_forward_pre_hooks", "_forward_hooks"):
        table = getattr(module, slot, None)
        out += list(table.values()) if isinstance(table, dict) else []
    return out


def backward_hooks(module: nn.Module) -> list[Any]:
    """The module's backward pre-hooks and backward hooks (`register_full_backward_pre_hook`,
    `register_full_backward_hook`, the legacy `register_backward_hook`; private slots on torch 2.11-2.15). Calling the
    module from compiled code breaks the graph there (each kind measured on 2.11-2.15)."""
    out: list[Any] = []
    for slot in ("_backward_pre_hooks", "_backward_hooks"):
        table = getattr(module, slot, None)
        out += list(table.values()) if isinstance(table, dict) else []
    return out


def global_forward_hooks() -> list[Any]:
    """Forward (pre-)hooks registered for every module (`register_module_forward_hook`), from torch's private
    registries `_global_forward_pre_hooks` / `_global_forward_hooks` (same names on 2.11-2.15)."""
    from torch.nn.modules import module as module_mod

    out: list[Any] = []
    for name in ("_global_forward_pre_hooks", "_global_forward_hooks"):
        table = getattr(module_mod, name, None)
        out += list(table.values()) if isinstance(table, dict) else []
    return out


def is_compiler_disabled(fn: Any) -> bool:
    """Whether `fn` is wrapped by `torch.compiler.disable` (calling it from compiled code breaks the graph)."""
    return bool(getattr(fn, "_torchdynamo_disable", False))


SYSTEM_MODULES = frozenset({"posix", "nt", "os", "time", "socket", "_socket", "gc", "_thread", "resource", "signal"})
SYSTEM_MODULES |= frozenset({"select", "sys", "zlib", "_hashlib", "_random", "pwd", "grp"})
"""C modules that talk to the process or the machine (`os.uname()`, `socket.gethostname()`, `gc.collect()`)."""


def untraceable_system_call(fn: Any) -> bool:
    """A C function of a system module that Dynamo's trace rules skip (`torch._dynamo.trace_rules.lookup` gives
    `SkipFunctionVariable`, torch 2.11-2.15): calling it from compiled code breaks the graph. Polyfilled ones
    (`sys.intern`) and in-graph ones (`math.*`) are traced."""
    return getattr(fn, "__module__", None) in SYSTEM_MODULES and _skipped_builtin(fn)


def skipped_torch_builtin(fn: Any) -> bool:
    """A C function of torch's namespace that Dynamo's trace rules skip: `torch._nested_tensor_from_mask`,
    `torch._foreach_max`, `torch.set_num_threads`, each breaking the graph ("Attempted to call function marked as
    skipped", measured on torch 2.11-2.15). How many differs by version (69 on 2.11, 67 on 2.12 and 2.13, 68 on
    2.14, 70 on 2.15): read from the rule table, never a list of names."""
    return _in_torch(fn) and _skipped_builtin(fn)


def _skipped_builtin(fn: Any) -> bool:
    """A C function (`builtin_function_or_method`) that `trace_rules.lookup` maps to `SkipFunctionVariable`."""
    return type(fn).__name__ == "builtin_function_or_method" and _skip_rule(fn)


@functools.lru_cache(maxsize=4096)
def _skip_rule(fn: Any) -> bool:
    """(Cached per function: the scan meets the same C functions in every layer.)"""
    from torch._dynamo import trace_rules

    try:
        return getattr(trace_rules.lookup(fn), "__name__", "") == "SkipFunctionVariable"
    except Exception:  # a torch without the rule table: unknown, not reported
        return False


def _in_torch(fn: Any) -> bool:
    module = str(getattr(fn, "__module__", "") or "")
    return module == "torch" or module.startswith("torch.")


def torch_graph_break(fn: Any) -> str | None:
    """Why calling a torch library callable from compiled code breaks the graph, where torch's own code says so:
    its file is one Dynamo force-skips (`trace_rules.FORCE_SKIP_FILES`: `optim/lr_scheduler.py` on torch 2.11-2.15),
    or a wrapper it runs calls `torch._dynamo.graph_break()` itself (the optimizers' `step`, around the update)."""
    from torch._dynamo import trace_rules

    skipped: set[str] = getattr(trace_rules, "FORCE_SKIP_FILES", set())
    for _ in range(8):
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None or not str(getattr(fn, "__module__", "") or "").startswith("torch."):
            return None
        if code.co_filename in skipped:
            return f"runs code of torch/{code.co_filename.rsplit('torch/', 1)[-1]}, a file Dynamo skips"
        if "graph_break" in code.co_names and "_dynamo" in code.co_names:
            return f"{fn.__qualname__} calls torch._dynamo.graph_break()"
        fn = getattr(fn, "__wrapped__", None)
    return None


NUMBER_TYPES = {int: "int", bool: "bool", float: "float", str: "str", "int": "int", "bool": "bool", "float": "float"}
"""Return annotations of a torch function that certainly give a Python value, not a tensor."""


def non_tensor_torch_call(fn: Any) -> str | None:
    """Why a torch function put in the graph breaks it: Dynamo runs a function of its in-graph list
    (`trace_rules.lookup` gives `TorchInGraphFunctionVariable`) on fake tensors and gives up when the result is not a
    tensor ("torch.* op returned non-Tensor"), unless it constant-folds the function (`constant_fold_functions`:
    `torch.cuda.is_available`) or has a handler of its own (`_get_handlers`: `torch.is_grad_enabled`). Only a function
    that certainly returns a number counts (`_number_returned`: `torch.cuda.device_count`, `torch.equal`,
    `torch.is_same_size`, `torch.result_type`, measured breaking on torch 2.11-2.15). All
    three lists are private to `torch._dynamo` (2.11-2.15); a torch lacking one reports nothing."""
    kind = _number_returned(fn)
    if kind is None or not _in_torch(fn):
        return None
    try:
        from torch._dynamo import trace_rules
        from torch._dynamo.variables import torch as in_graph

        handled = fn in in_graph.constant_fold_functions or fn in in_graph.TorchInGraphFunctionVariable._get_handlers()
        if handled or trace_rules.lookup(fn) is not in_graph.TorchInGraphFunctionVariable:
            return None
    except (ImportError, AttributeError, TypeError):
        return None
    return f"a torch function Dynamo puts in the graph returns a Python {kind}, not a tensor"


def _number_returned(fn: Any) -> str | None:
    """The Python type a torch function certainly returns: a Python function's return annotation, or for a C
    function of torch's namespace the return type every overload of its ATen operator declares (`torch.equal`,
    `torch.is_same_size`, `torch.result_type`: `bool`/`int`/`float` alone). A C function with no ATen schema
    (`torch.get_num_threads`) is unknown."""
    if isinstance(fn, types.FunctionType):
        annotation = inspect.signature(fn).return_annotation
        return NUMBER_TYPES.get(annotation) if isinstance(annotation, (type, str)) else None
    return _aten_number(fn.__name__) if type(fn).__name__ == "builtin_function_or_method" else None


@functools.lru_cache(maxsize=4096)
def _aten_number(name: str) -> str | None:
    """The Python number type every overload of an ATen operator returns, if one (cached per name)."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except RuntimeError:
        return None
    kinds = {tuple(str(r.type) for r in schema.returns) for schema in schemas}
    return NUMBER_TYPES.get(kinds.pop()[0]) if len(kinds) == 1 and len(next(iter(kinds))) == 1 else None


def is_disable_decorator(fn: Any) -> bool:
    """`torch.compiler.disable` or the private `torch._dynamo.disable` older code decorates with (torch 2.11-2.15)."""
    import torch._dynamo

    return any(fn is f for f in (getattr(torch.compiler, "disable", None), getattr(torch._dynamo, "disable", None)))


def is_batchnorm(module: Any) -> bool:
    """BatchNorm1d/2d/3d, SyncBatchNorm and subclasses (their private common base)."""
    from torch.nn.modules.batchnorm import _BatchNorm

    return isinstance(module, _BatchNorm)


def is_dropout(module: Any) -> bool:
    """Dropout of any dimension (their private common base)."""
    from torch.nn.modules.dropout import _DropoutNd

    return isinstance(module, _DropoutNd)


def recompile_limit() -> int:
    """torch's global per-frame recompile limit (`torch._dynamo.config.recompile_limit`, default 8)."""
    import torch._dynamo

    return int(getattr(torch._dynamo.config, "recompile_limit", 8))


def ints_go_dynamic() -> bool:
    """Whether a Python int that changes between calls becomes a symbol after one recompile (`automatic_dynamic_shapes`
    on, `specialize_int` off: the defaults of torch 2.11-2.15)."""
    import torch._dynamo

    config = torch._dynamo.config
    return bool(getattr(config, "automatic_dynamic_shapes", True)) and not getattr(config, "specialize_int", False)


def static_parameter_shapes() -> bool:
    """Whether Dynamo keeps the shapes of module parameters static (`force_parameter_static_shapes`, True by
    default in torch 2.11-2.15): a parameter or buffer of another shape is a recompile, never made dynamic."""
    import torch._dynamo

    return bool(getattr(torch._dynamo.config, "force_parameter_static_shapes", True))


def ignored_logging_functions() -> frozenset[Any]:
    """Logging functions Dynamo was told to skip without a graph break: `ignore_logging_functions`, of which
    `ignore_logger_methods` is an alias (both names on torch 2.11-2.15), plus `reorderable_logging_functions` (moved
    after the graph, no break)."""
    import torch._dynamo

    config = torch._dynamo.config
    names = ("ignore_logging_functions", "ignore_logger_methods", "reorderable_logging_functions")
    return frozenset(fn for name in names for fn in (getattr(config, name, None) or ()))


def captures_scalar_outputs() -> bool:
    """`capture_scalar_outputs`: Dynamo traces `.item()` into the graph instead of breaking it (off by default)."""
    import torch._dynamo

    return bool(getattr(torch._dynamo.config, "capture_scalar_outputs", False))


def captures_dynamic_output_shapes() -> bool:
    """`capture_dynamic_output_shape_ops`: Dynamo traces `nonzero`, boolean-mask indexing and the like into the graph
    instead of breaking it (off by default on 2.11-2.15)."""
    import torch._dynamo

    return bool(getattr(torch._dynamo.config, "capture_dynamic_output_shape_ops", False))


_COMPILE_STATE_FUNCTIONS = {
    "is_compiling": (
        ("torch.compiler", "is_compiling"),
        ("torch.compiler", "is_dynamo_compiling"),
        ("torch._dynamo", "is_compiling"),
        ("torch._dynamo.external_utils", "is_compiling"),
        ("torch._utils", "is_compiling"),
    ),
    "is_scripting": (("torch.jit", "is_scripting"),),
    "is_tracing": (("torch.jit", "is_tracing"),),
    "is_exporting": (("torch.compiler", "is_exporting"),),
}
"""Role -> where torch defines a function of that role (public ones and their private aliases)."""


def compile_state_functions() -> dict[str, list[Any]]:
    """Role (`is_compiling`, `is_scripting`, `is_tracing`, `is_exporting`) -> the functions this torch has for it."""
    import importlib

    out: dict[str, list[Any]] = {}
    for role, places in _COMPILE_STATE_FUNCTIONS.items():
        for module, name in places:
            try:
                out.setdefault(role, []).append(getattr(importlib.import_module(module), name))
            except (ImportError, AttributeError):
                continue
    return out
