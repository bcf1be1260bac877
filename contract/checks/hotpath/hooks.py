"""Forward hooks on a region's modules: each runs inside the compiled call and is walked as hot code with its module
bound, except the compiled module's own hooks that do no tensor work (eager code, walked like the step) and hooks
under `torch.compiler.disable` (a graph break where the hook is defined). A submodule's backward hooks are a graph
break too."""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

from torch import nn

from contract import _torch_scan
from contract.checks.hotpath.frames import graphless
from contract.checks.hotpath.model import Hazard, ScanState
from contract.checks.hotpath.resolve import CallArgs
from contract.checks.hotpath.source import parse_source
from contract.checks.hotpath.visit import visit_callable
from contract.checks.hotpath.walk import Walker


def visit_hooks(state: ScanState, module: nn.Module, region: str, eager: type[Walker] | None = None) -> None:
    """Forward (pre-)hooks registered on the region's modules, and global module hooks, run inside the compiled call:
    each is walked with the module bound to its first parameter. The compiled module's own hooks that do no tensor
    work trace no graph (`frames`): they are walked as eager code between calls (`eager`, the step's walker)."""
    globals_ = _torch_scan.global_forward_hooks()
    for sub in module.modules():
        if sub is not module:
            backward_hooks(state, sub, region)
        for hook in _torch_scan.forward_hooks(sub):
            if sub is not module and disabled_hook(state, hook, region):
                continue
            own_frame = sub is module and eager is not None and graphless(state, hook, sub)
            visit_hook(state, hook, sub, region, walker=eager if own_frame else None)
    for hook in globals_:
        visit_hook(state, hook, module, region)


def backward_hooks(state: ScanState, module: nn.Module, region: str) -> None:
    """A submodule with a backward (pre-)hook (a gradient-reversal layer's `register_full_backward_pre_hook`): the
    compiled forward breaks where that module is called; reported at the hook's definition."""
    for hook in _torch_scan.backward_hooks(module):
        fn = hook.func if isinstance(hook, functools.partial) else hook
        name = getattr(fn, "__qualname__", type(fn).__name__)
        what = f"backward hook {name} on {type(module).__name__} (Dynamo does not trace module backward hooks)"
        state.hazards.append(Hazard(kind="graph-break", where=_defined_at(fn), region=region, what=what))


def _defined_at(fn: Any) -> str:
    """`file:line` of a hook's `def` (`<hook>` where its source cannot be read)."""
    inner = inspect.unwrap(fn)
    src = parse_source(inner) if isinstance(inner, types.FunctionType) else None
    return f"{src.file}:{src.offset + src.node.lineno}" if src is not None else "<hook>"


def disabled_hook(state: ScanState, hook: Any, region: str) -> bool:
    """A submodule's hook under `torch.compiler.disable` (FSDP2's unshard/reshard hooks, a tracker's): the compiled
    forward breaks around it at every call; reported at the hook's definition."""
    fn = hook.func if isinstance(hook, functools.partial) else hook
    if not _torch_scan.is_compiler_disabled(fn):
        return False
    name = getattr(fn, "__qualname__", type(fn).__name__)
    what = f"forward hook {name} (torch.compiler.disable)"
    state.hazards.append(Hazard(kind="graph-break", where=_defined_at(fn), region=region, what=what))
    return True


def visit_hook(state: ScanState, hook: Any, module: nn.Module, region: str, walker: type[Walker] | None = None) -> None:
    """One hook called as `hook(module, args, ...)`; a `functools.partial` passes its own arguments first."""
    pre: tuple[tuple[Any, str], ...] = ()
    keywords: tuple[tuple[str, Any, str], ...] = ()
    if isinstance(hook, functools.partial):
        pre = tuple((a, "") for a in hook.args)
        keywords = tuple((k, v, "") for k, v in hook.keywords.items())
        hook = hook.func
    call = CallArgs(positional=(*pre, (module, "")), keywords=keywords, rest="some")
    visit_callable(state, hook, None, region, 1, call=call, walker=walker or Walker)
