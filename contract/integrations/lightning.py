"""Lightning: `CompileContract(path)`, a Callback that enforces the contract before Lightning's first compile, runs the
monitor for the fit and turns a `fail` breach into a clean stop on every rank.

    trainer = L.Trainer(callbacks=[CompileContract("contract.toml", warmup_steps=20)])
    trainer.fit(torch.compile(model))   # or trainer.fit(model): contract-compiled regions

Hook order (lightning 2.6, `trainer.py::_run`): callback `setup` runs before the LightningModule's `configure_model`
and the strategy's wrapping, so the final module tree first exists at `on_fit_start`; the first compile comes after it
(the sanity check's `validation_step`, else the first `training_step`). When the user passes `torch.compile(model)`,
Lightning keeps the LightningModule and re-wraps `forward`/`training_step`/`validation_step`/... with the compile's
context (`pytorch/utilities/compile.py::from_compiled`): those methods are the compiled frames, and the
LightningModule the callback receives is what `enforce` checks. Imports `lightning` (else `pytorch_lightning`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract.integrations.session import Session

try:  # the unified package first; the standalone one defines its own Callback class that its Trainer requires
    from lightning.pytorch import Callback
except ImportError:  # pragma: no cover - exercised only where only pytorch_lightning is installed
    from pytorch_lightning import Callback  # type: ignore[assignment]


class CompileContract(Callback):
    """Enforce `path` at `on_fit_start` (a refusal raises ContractViolation, with the full report, before any step),
    monitor the fit, end warm-up after `warmup_steps` optimizer steps and the first validation, stop the fit on a
    `fail` breach.

    Validation compiles every region a second time (eval mode, no grad: a `GLOBAL_STATE`/`training` guard), so
    warm-up also waits for the first validation when the fit validates: the sanity check (Lightning's default) ends
    it at once; without one, the first validation does."""

    def __init__(
        self,
        path: str | Path,
        *,
        warmup_steps: int | None = 1,
        strict: bool = False,
        serve: bool = True,
        registry: Any = None,
        logger: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`warmup_steps=None` leaves warm-up to each region's `warmup_compiles` (the validation recompile counts);
        `serve=False` opens no port; registry/logger/clock go to the monitor (tests)."""
        self.session = Session(
            path,
            warmup_steps=warmup_steps,
            strict=strict,
            serve=serve,
            registry=registry,
            logger=logger,
            clock=clock,
        )
        self.stopped_at: int | None = None
        """The global step at which this callback stopped the fit on a `fail` breach (None: it did not)."""
        self._validated = False
        self._ranks = 1

    @property
    def monitor(self) -> Any:
        """The running monitor (None before `fit` starts); `.snapshot()` stays readable after the fit."""
        return self.session.monitor

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        """The model is final and nothing has compiled yet: enforce (every rank gets the same verdict), then monitor."""
        self.stopped_at = None
        self._validated = False
        self._ranks = trainer.world_size
        self.session.start(pl_module)

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        """End warm-up when due; stop on a `fail` breach of any rank."""
        session = self.session
        if not session.warm:
            session.after_step(trainer.global_step, waiting=lambda: trainer.enable_validation and not self._validated)
        if session.watches_fail and self.stopped_at is None:
            self._maybe_stop(trainer)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        """Validation (the sanity check included) has compiled its mode; a breach during it stops the fit when it ends
        (no training step runs after it)."""
        self._validated = True
        if not trainer.sanity_checking:
            self._maybe_stop(trainer)

    def _maybe_stop(self, trainer: Any) -> None:
        """Every rank asks whether one breached a `fail` region (one boolean reduced across ranks per step, only with
        several ranks and a region that says `on_breach = "fail"`); if so each arms its breached regions and asks Lightning to stop. Lightning's
        validation-after-stop is skipped (it would call a failed region); with `min_steps`/`min_epochs` unmet
        Lightning keeps going and the failed region raises at its next call."""
        session = self.session
        if not session.watches_fail or self.stopped_at is not None:
            return
        pending = session.pending
        if self._ranks > 1:
            pending = trainer.strategy.reduce_boolean_decision(pending, all=False)
        if not pending:
            return
        self.stopped_at = trainer.global_step
        trainer.should_stop = True
        trainer.limit_val_batches = 0
        session.stopping("lightning", trainer.global_step, session.arm())

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """The fit failed: stop the monitor (final snapshot and push) before Lightning re-raises."""
        self.session.stop()

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """The fit ended: stop the monitor (idempotent)."""
        if stage == "fit":
            self.session.stop()
