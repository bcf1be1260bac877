"""torch-compile-contract, runtime side: `monitor.start(binding)` attributes compiles to regions and acts on budgets.

Imports are lazy so `import monitor` stays cheap until a monitor is started.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.binding.targets import Binding
    from monitor.runtime import Monitor

__all__ = ["start", "Monitor", "RecompileBudgetExceeded", "breach_of"]


def start(
    binding: Binding,
    *,
    registry: Any = None,
    logger: Any = None,
    clock: Callable[[], float] | None = None,
    serve: bool = True,
    manual_warmup: bool = False,
    act: Callable[..., str] | None = None,
) -> Monitor:
    """Hook Dynamo's compile events for this binding's regions; returns the handle (also a context manager).

    registry/logger/clock are injectable (tests); `serve=False` never opens a port; `manual_warmup=True` counts no
    recompile against a budget until `mark_warm()` (otherwise each region's `warmup_compiles` allowance applies).
    `act(binding, region, on_breach, error) -> action taken` replaces `monitor.actions.act` (an engine adapter defers
    `fail` to the end of the engine's step, so every rank stops there together).
    """
    import time

    from monitor.actions import act as default_act
    from monitor.runtime import Monitor

    return Monitor(
        binding,
        registry=registry,
        logger=logger,
        clock=clock or time.perf_counter,
        serve=serve,
        manual_warmup=manual_warmup,
        act=act or default_act,
    )


def __getattr__(name: str) -> Any:
    if name == "Monitor":
        from monitor.runtime import Monitor

        return Monitor
    if name == "RecompileBudgetExceeded":
        from monitor.actions import RecompileBudgetExceeded

        return RecompileBudgetExceeded
    if name == "breach_of":
        from monitor.actions import breach_of

        return breach_of
    raise AttributeError(name)
