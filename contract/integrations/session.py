"""One engine run under a contract, whatever the engine: enforce, monitor, warm-up after N steps, fail breaches read
as a stop request. The adapters call it from their engine's hooks; it imports no engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contract.binding.targets import Binding, RegionBinding
    from monitor.actions import RecompileBudgetExceeded
    from monitor.runtime import Monitor


def preflight(path: str | Path) -> None:
    """Read the contract when the adapter is built, before the engine runs: a file that cannot be read raises
    ContractFileError (one line: the path and the fix), a document with errors ContractViolation (its findings, each
    with its key); the model-level checks wait for `start`."""
    from contract.document.load import load
    from contract.pipeline import ContractViolation
    from contract.report.allow import silenced

    contract, findings = load(path)
    errors = [f for f in findings if f.severity == "error" and not silenced(f, contract)]
    if contract is None or errors:
        raise ContractViolation(errors or findings, path)


class Session:
    """The contract's side of one run: `start(model)` once the engine has built the model, `after_step(n)` after each
    optimizer step (a few attribute reads: no per-step cost), `stop()` when the run ends (idempotent).

    A `fail` breach is deferred to the engine's step boundary: the monitor's action records it (the region keeps running
    for the rest of the step in flight, whose other instances would otherwise raise half-way through a step), the
    adapter asks every rank whether one breached (`pending`), and `arm()` installs the raising guard as
    `monitor.actions` would: if the engine does not stop, the region's next call raises `RecompileBudgetExceeded`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        warmup_steps: int | None = None,
        strict: bool = False,
        serve: bool = True,
        registry: Any = None,
        logger: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if warmup_steps is not None and (isinstance(warmup_steps, bool) or warmup_steps < 0):
            raise ValueError(f"warmup_steps={warmup_steps!r}: give a number of steps >= 0, or None")
        preflight(path)
        self.path = path
        self.warmup_steps = warmup_steps
        """Steps after which every recompile counts against its budget; None: each region's `warmup_compiles`."""
        self.strict = strict
        self._monitor_kw: dict[str, Any] = {"serve": serve, "registry": registry, "logger": logger, "clock": clock}
        self.binding: Binding | None = None
        self.monitor: Monitor | None = None
        self._fail: tuple[RegionBinding, ...] = ()
        self.watches_fail = False
        """Some region says `on_breach = "fail"`: the adapter must ask, after each step, whether to stop."""
        self._pending: dict[str, RecompileBudgetExceeded] = {}
        self.warm = False
        """Warm-up is over (the adapters test it before reading their engine's step counter)."""

    def start(self, model: Any, *, group: Any = None) -> Monitor:
        """Enforce the contract on the engine's model (raises ContractViolation with the full report, on every rank
        alike), then start the monitor; `model` may be the engine's compiled object (wrappers are seen through)."""
        import monitor
        from contract.pipeline import enforce

        self.stop()
        if self.monitor is not None:  # a new run: the registry holds this run's families, not the last one's
            self.monitor.unregister()
        self.binding = enforce(model, self.path, strict=self.strict, group=group)
        self._pending = {}
        self.monitor = monitor.start(
            self.binding, manual_warmup=self.warmup_steps is not None, act=self._act, **self._monitor_kw
        )
        self._fail = tuple(rb for rb in self.binding.regions.values() if rb.region.on_breach == "fail")
        self.watches_fail = bool(self._fail)
        self.warm = False
        if self.warmup_steps == 0:
            self._end_warmup()
        return self.monitor

    def after_step(self, steps_done: int, *, waiting: Callable[[], bool] | None = None) -> None:
        """During warm-up, after an optimizer step: end it once `steps_done` reaches `warmup_steps` and `waiting()`
        (the engine's first evaluation has not run yet: it compiles every region again, in eval and no-grad mode) is
        false. Adapters skip the call once `warm`: a steady-state step reads two attributes, nothing more. Until then,
        each boundary verifies lazily compiled engine regions whose first call fired no compile (a served graph)."""
        if self.monitor is not None and self.monitor.verifying:
            self.monitor.verify_engine()
        if self.warm or self.warmup_steps is None or steps_done < self.warmup_steps:
            return
        if waiting is None or not waiting():
            self._end_warmup()

    @property
    def pending(self) -> bool:
        """A `fail` region breached on this process and is not armed yet (the engine should stop at this boundary)."""
        return bool(self._pending)

    def arm(self) -> list[str]:
        """Install the raising guard of every pending `fail` breach (what `monitor.actions.act` does at once); returns
        their regions."""
        from monitor.actions import act

        names = list(self._pending)
        for region, error in self._pending.items():
            if self.binding is not None:
                act(self.binding, region, "fail", error)
        self._pending = {}
        return names

    def stopping(
        self,
        engine: str,
        step: int,
        regions: list[str],
        *,
        event: str = "training_stopped",
        effect: str = "every rank stops after this step; a breached region raises RecompileBudgetExceeded if called",
    ) -> None:
        """Log what the engine does on a `fail` breach at its boundary (`training_stopped`: the trainer stops;
        `regions` is empty on a rank that stops because another one breached)."""
        self.emit("error", event, engine=engine, step=step, regions=regions, effect=effect)

    def emit(self, level: str, event: str, **fields: Any) -> None:
        """Every adapter event goes through the monitor's sink (its log and `[monitor] events_path` file): the
        post-mortem report reads that file, so it must hold why a run stopped."""
        if self.monitor is not None:
            self.monitor.emit(level, event, **fields)

    def _act(self, binding: Binding, region: str, action: str, error: RecompileBudgetExceeded) -> str:
        """The monitor's breach action: `fail` waits for the step boundary (`arm`), the others act at once."""
        from monitor.actions import act

        if action != "fail":
            return act(binding, region, action, error)
        self._pending[region] = error
        return "fail"

    def stop(self) -> None:
        """Stop the monitor (final snapshot, push, port closed); the binding stays readable."""
        if self.monitor is not None:
            self.monitor.stop()

    def _end_warmup(self) -> None:
        self.warm = True
        if self.monitor is not None:
            self.monitor.mark_warm()
