"""Visits: which function (or submodule method) the walk enters next, at most once per (code, instance, call,
mode), and with which walker (the hot walk's `walk.Walker`, or the step's `loop.LoopWalker`)."""

from __future__ import annotations

from typing import Any, Protocol

from torch import nn

from contract.checks.hotpath.model import MAX_VISITS, Cond, ScanState, Source
from contract.checks.hotpath.resolve import CallArgs, Env
from contract.checks.hotpath.source import callee_of, source_of, user_code


class Walk(Protocol):
    def run(self) -> None: ...


class WalkerClass(Protocol):
    """A walker class (`walk.Walker`, `loop.LoopWalker`): built for one visit, then run."""

    MODE: str

    def __call__(
        self, state: ScanState, src: Source, env: Env, region: str, depth: int, guard: Cond | None = None
    ) -> Walk: ...


def visit_callable(
    state: ScanState,
    fn: Any,
    owner: Any,
    region: str,
    depth: int = 0,
    guard: Cond | None = None,
    call: CallArgs | None = None,
    *,
    walker: WalkerClass,
) -> None:
    """Visit a function reached on the hot path (or, with a loop walker, from the step), with the object bound as its
    first argument (or None) and what the call site passes."""
    dropped, state.dropping = state.dropping, False
    fn, owner = callee_of(fn, owner)
    if depth > 40 or state.visits >= MAX_VISITS or not user_code(fn):
        return
    cls = walker
    if cls.MODE == "hot":
        (state.dropped_results if dropped else state.used_results).add(fn.__code__)
    call = call or CallArgs()
    key: tuple[Any, ...] = (
        fn.__code__,
        id(owner),
        region,
        guard is None,
        cls.MODE,
        call.key(),
        bool(state.branches),
        state.rewalking,
    )
    key += tuple(state.modes)  # a call under another grad/autocast mode is a call of its own (`modes.record_call`)
    if key in state.visited:
        return
    state.visited.add(key)
    state.visits += 1
    if depth == 0:  # a call's walk starts: nothing read in it yet
        state.call_reads = set()
    src = source_of(state, fn)
    if src is not None:
        cls(state, src, Env.of(fn, owner, src.node, call), region, depth, guard).run()


def visit_module(
    state: ScanState,
    module: nn.Module,
    region: str,
    depth: int,
    method: str = "forward",
    guard: Cond | None = None,
    call: CallArgs | None = None,
    *,
    walker: WalkerClass,
) -> None:
    """A submodule called on the hot path: its method (and `__call__` override), or the function a hook library put
    on the instance in its place (`module.forward = new_forward`: diffusers' and accelerate's hooks); torch's own
    modules run no user code otherwise (their containers' children are followed by `Walker.enter_module`)."""
    cls = type(module)
    own = module.__dict__.get(method)
    if own is not None and callable(own) and not isinstance(own, nn.Module):
        return visit_callable(state, own, None, region, depth + 1, guard, call, walker=walker)
    if cls.__module__.split(".")[0] == "torch":
        return
    visit_callable(state, getattr(cls, method, None), module, region, depth + 1, guard, call, walker=walker)
    if method == "forward" and cls.__call__ is not nn.Module.__call__:
        visit_callable(state, cls.__call__, module, region, depth + 1, guard, call, walker=walker)
