"""Hugging Face: `CompileContractCallback`, a TrainerCallback that enforces the contract before the Trainer's first
compile, runs the monitor for `train()` and turns a `fail` breach into the Trainer's own stop on every process.

    trainer = Trainer(model=model, args=TrainingArguments(..., torch_compile=True), ...)
    trainer.add_callback(CompileContractCallback("contract.toml", trainer, warmup_steps=20))
    trainer.train()

The callback needs the Trainer (transformers 5.24, `trainer.py::_init_training_state`): with `torch_compile=True`
accelerate's `prepare_model` compiles the model last, `torch.compile(model)` or, with regional compilation
(`ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1`), `compile_regions` on a shallow copy of the model tree, and the
result lives only at `trainer.model_wrapped`; the `model` a callback receives is the uncompiled model the callback
handler was built with. `enforce` is given `trainer.model_wrapped` (wrappers are seen through). `on_train_begin` runs
after `prepare` and before the first step, so before the first compile. Imports `transformers` only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from contract.integrations.session import Session


class CompileContractCallback(TrainerCallback):
    """Enforce `path` at `on_train_begin` on `trainer.model_wrapped` (a refusal raises ContractViolation, with the full
    report, before any step), monitor the run, end warm-up after `warmup_steps` optimizer steps and the first
    evaluation (it compiles every region again in eval/no-grad mode; `eval_on_start=True` runs it first), and stop
    training on a `fail` breach."""

    def __init__(
        self,
        path: str | Path,
        trainer: Any,
        *,
        warmup_steps: int | None = 1,
        strict: bool = False,
        serve: bool = True,
        registry: Any = None,
        logger: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`trainer`: the Trainer this callback is added to (the compiled model lives there). `warmup_steps=None`
        leaves warm-up to each region's `warmup_compiles`; `serve=False` opens no port; registry/logger/clock go to
        the monitor (tests)."""
        self.trainer = trainer
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
        """The global step at which this callback stopped training on a `fail` breach (None: it did not)."""
        self._evaluated = False
        self._accelerator: Any = None
        """The Trainer's accelerator when several processes train (their stop decision is reduced), else None."""

    @property
    def monitor(self) -> Any:
        """The running monitor (None before `train()` starts); `.snapshot()` stays readable after it."""
        return self.session.monitor

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        """The Trainer has prepared (and, with `torch_compile`, wrapped) the model; nothing has compiled yet."""
        if model is not None and model is not self.trainer.model:
            raise ValueError(
                "CompileContractCallback was built with another Trainer than the one training; "
                "build it with the Trainer it is added to: trainer.add_callback(CompileContractCallback(path, trainer))"
            )
        self.stopped_at = None
        self._evaluated = False
        accelerator = getattr(self.trainer, "accelerator", None)
        self._accelerator = accelerator if accelerator is not None and accelerator.num_processes > 1 else None
        self.session.start(self.trainer.model_wrapped)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """End warm-up when due; stop on a `fail` breach of any process."""
        session = self.session
        if not session.warm:
            session.after_step(state.global_step, waiting=lambda: args.eval_strategy != "no" and not self._evaluated)
        if session.watches_fail and self.stopped_at is None:
            self._maybe_stop(state, control)

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Evaluation has compiled its mode; a breach during it stops training when it ends."""
        self._evaluated = True
        self._maybe_stop(state, control)

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """After a stop, the end-of-epoch evaluation would call a failed region: skip it."""
        if self.stopped_at is not None:
            control.should_evaluate = False

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Training ended: stop the monitor (final snapshot, push; idempotent)."""
        self.session.stop()

    def _maybe_stop(self, state: Any, control: Any) -> None:
        """Every process asks whether one breached a `fail` region (accelerate's trigger, one reduction per step, only
        with several processes and a `fail` region); if so each arms its breached regions and stops training, without
        the evaluation that would call them."""
        session = self.session
        if not session.watches_fail or self.stopped_at is not None or not self._any_process(session.pending):
            return
        self.stopped_at = state.global_step
        control.should_training_stop = True
        control.should_evaluate = False
        session.stopping("hf_trainer", state.global_step, session.arm())

    def _any_process(self, flag: bool) -> bool:
        """Whether any process raised `flag` (locally when there is one process: no tensor, no collective)."""
        accelerator = self._accelerator
        if accelerator is None:
            return flag
        if flag:
            accelerator.set_trigger()
        return bool(accelerator.check_trigger())


class GenerateContract:
    """A model whose `generate()` compiles itself (a static cache: `get_compiled_call` compiles `model.__call__` for
    the decode steps at the first call): enforce at construction, the monitor for its calls, warm-up ended after
    `warmup_calls` calls, a `fail` breach acted on after the call in flight (that request completes; the region's next
    call raises `RecompileBudgetExceeded`).

    The region covering the model says `compiled_by = "engine"` and `verify_at = "first_compile"`: nothing is compiled
    before the first `generate()`, so the engine's settings are verified when it compiles (a mismatch is a breach).
    """

    def __init__(
        self,
        model: Any,
        path: str | Path,
        *,
        warmup_calls: int | None = 1,
        strict: bool = False,
        serve: bool = True,
        registry: Any = None,
        logger: Any = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`warmup_calls=None` leaves warm-up to each region's `warmup_compiles`; `serve=False` opens no port;
        registry/logger/clock go to the monitor (tests)."""
        self.model = model
        self.calls = 0
        self.session = Session(
            path,
            warmup_steps=warmup_calls,
            strict=strict,
            serve=serve,
            registry=registry,
            logger=logger,
            clock=clock,
        )
        self.session.start(model)

    @property
    def monitor(self) -> Any:
        """The running monitor: `.snapshot()`, `.mark_warm()`."""
        return self.session.monitor

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """`model.generate(...)`, then: one call more, warm-up ended when due, a pending `fail` breach armed."""
        out = self.model.generate(*args, **kwargs)
        self.calls += 1
        self.session.after_step(self.calls)
        if self.session.pending:
            self.session.stopping(
                "hf_generate",
                self.calls,
                self.session.arm(),
                event="generate_fail_armed",
                effect="this call completed; the breached region's next call raises RecompileBudgetExceeded",
            )
        return out

    def stop(self) -> None:
        """Stop the monitor (final snapshot, push; idempotent)."""
        self.session.stop()

    def __enter__(self) -> GenerateContract:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
