"""Library-style code for author A's cases: stands for modules of other packages (a settings system in the style of
gpytorch.settings, torchtune's peft utilities). Nothing here is a case."""
from __future__ import annotations

import contextlib
from typing import Iterator

from torch import nn


class _value_context:
    """A setting whose value lives on the class (gpytorch.settings style); `with setting(v):` swaps it."""

    _global_value: float = 0.0

    @classmethod
    def value(cls) -> float:
        return cls._global_value

    @classmethod
    def _set_value(cls, value: float) -> None:
        cls._global_value = value

    def __init__(self, value: float) -> None:
        self._orig_value = self.__class__.value()
        self._instance_value = value

    def __enter__(self) -> "_value_context":
        self.__class__._set_value(self._instance_value)
        return self

    def __exit__(self, *args: object) -> bool:
        self.__class__._set_value(self._orig_value)
        return False


class observation_noise_floor(_value_context):
    """Lower bound added to the likelihood's noise before the Cholesky solve."""

    _global_value = 1e-4


class _AdapterModule:
    """Marker base for modules that carry a LoRA adapter (torchtune.modules.peft.AdapterModule)."""


def set_trainable_params(model: nn.Module) -> None:
    for name, param in model.named_parameters():
        param.requires_grad_("lora" in name)


@contextlib.contextmanager
def disable_adapter(model: nn.Module) -> Iterator[None]:
    """Run `model` as its base model: every adapter module is switched off, then back on (torchtune peft utils)."""
    for _, module in model.named_modules():
        if isinstance(module, _AdapterModule) and hasattr(module, "disabled"):
            module.disabled = True
    try:
        yield
    finally:
        for _, module in model.named_modules():
            if isinstance(module, _AdapterModule) and hasattr(module, "disabled"):
                module.disabled = False
