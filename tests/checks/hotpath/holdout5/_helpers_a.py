"""Library-style helpers used by holdout5 cases A (they stand for code living in another package)."""
from __future__ import annotations

import warnings

import torch
from torch import nn

_DEFAULT_TP_GROUP = "world"


def get_tp_group_if_none(tp_group: object | None) -> object:
    """Megatron-style deprecation shim: warns whenever the caller does not pass the group explicitly."""
    if tp_group is None:
        warnings.warn("tp_group is None: falling back to the global tensor-parallel group (deprecated)", DeprecationWarning, stacklevel=2)
        return _DEFAULT_TP_GROUP
    return tp_group


class Run:
    """A tiny experiment-tracker stand-in (wandb-like): collects logged values per key."""

    def __init__(self) -> None:
        self.history: dict[str, list[float]] = {}

    def log(self, key: str, value: float) -> None:
        self.history.setdefault(key, []).append(value)


def watch(model: nn.Module, run: Run) -> None:
    """wandb.watch-style: a forward hook on every leaf module logs the mean activation as a Python float."""
    for name, module in model.named_modules():
        if name and not list(module.children()):
            def hook(mod: nn.Module, inputs: tuple, output: torch.Tensor, _name: str = name) -> None:
                run.log(f"act/{_name}", output.detach().float().mean().item())

            module.register_forward_hook(hook)


class LambdaSchedule:
    """A minimal LR-scheduler-like object: `get_last_lr()` returns Python floats that `step()` advances."""

    def __init__(self, base_lr: float, gamma: float) -> None:
        self.base_lr = base_lr
        self.gamma = gamma
        self.last_epoch = 0
        self._last_lr = [base_lr]

    def step(self) -> None:
        self.last_epoch += 1
        self._last_lr = [self.base_lr * self.gamma**self.last_epoch]

    def get_last_lr(self) -> list[float]:
        return self._last_lr
