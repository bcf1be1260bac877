"""What the monitor does on a budget breach: alert (log + metric), eager (region falls back), fail (next call raises)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contract.binding.apply import set_eager, set_guard
from contract.binding.targets import Binding, Target


class RecompileBudgetExceeded(RuntimeError):
    """A region exceeded its budget and its contract says `on_breach = "fail"`; raised at its next call."""

    def __init__(
        self, region: str, count: float, budget: float, reasons: tuple[str, ...], kind: str = "recompile_budget"
    ):
        self.region, self.count, self.budget, self.reasons, self.kind = region, count, budget, tuple(reasons), kind
        last = f"; last reason: {reasons[-1]}" if reasons else ""
        if kind == "engine_settings":
            super().__init__(
                f"region {region!r} was compiled by the engine with other settings than the contract's{last}; "
                "compile with the contract's settings in the engine, or write the engine's into the contract"
            )
            return
        super().__init__(
            f"region {region!r} exceeded its {kind.replace('_', ' ')} ({count} > {budget}){last}; "
            f"fix the guard failure or raise {kind} in the contract"
        )


MAX_CHAIN = 32
"""Exceptions walked in a chain by `breach_of` (a wrapper of a wrapper of the breach is deep enough)."""


def breach_of(exc: BaseException | None) -> RecompileBudgetExceeded | None:
    """The budget breach an exception is or wraps, else None: how to recognise a `fail` breach whatever raised it.

    A region's armed call raises the breach itself. An armed unclaimed budget raises it in Dynamo's compile callback,
    and Dynamo re-raises every error of a callback as `InternalTorchDynamoError(...) from None`
    (torch/_dynamo/convert_frame.py, torch 2.11 to 2.15): the breach is that error's `__context__`, never its
    `__cause__`, so the whole chain is walked (bounded, cycle-safe)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(seen) < MAX_CHAIN:
        if isinstance(exc, RecompileBudgetExceeded):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _raiser(error: RecompileBudgetExceeded) -> Callable[[Target], Callable[..., Any]]:
    """Build, per target, a callable that raises the breach error instead of running the region."""

    def make(target: Target) -> Callable[..., Any]:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            raise error

        guarded.__qualname__ = f"budget_exceeded[{target.region}:{target.path}.{target.method}]"
        return guarded

    return make


def act(binding: Binding, region: str, action: str, error: RecompileBudgetExceeded) -> str:
    """Carry out `on_breach` for one region (never raises into Dynamo: fail only arms the next call)."""
    if action == "eager":
        set_eager(binding, region)
        return "eager"
    if action == "fail":
        set_guard(binding, region, _raiser(error))
        return "fail"
    return "alert"
