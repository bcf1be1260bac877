"""Third-party-library-style objects that hold-out cases keep as attributes of a model.

They imitate the shape of real library classes (a torchmetrics-like running metric, a counter object, an
OmegaConf-like config) without depending on those libraries. Reduced from Lightning-AI/torchmetrics#1780
(`self._update_count == 0` recompiles), pytorch/pytorch#113333 (a Counter object incremented from a patched
forward) and pytorch/pytorch#138224 (OmegaConf `__getattr__`).
"""
from __future__ import annotations

import torch


class RunningMean:
    """A running mean in the style of a metrics library: Python-side bookkeeping plus tensor state."""

    def __init__(self) -> None:
        self._update_count = 0
        self._computed = None
        self.total = torch.zeros(())
        self.weight = torch.zeros(())

    def update(self, value: torch.Tensor) -> None:
        self._update_count += 1
        self._computed = None
        self.total = self.total + value.detach().sum()
        self.weight = self.weight + value.numel()

    def compute(self) -> torch.Tensor:
        if self._computed is None:
            self._computed = self.total / self.weight.clamp(min=1)
        return self._computed


class Counter:
    """A tiny counter object (pytorch/pytorch#113333 uses one to count forward calls)."""

    def __init__(self) -> None:
        self.count = 0

    def incr(self) -> None:
        self.count = self.val() + 1

    def val(self) -> int:
        return self.count


class AttrConfig:
    """An OmegaConf-DictConfig-like container: attribute reads go through a custom __getattr__."""

    def __init__(self, **values) -> None:
        object.__setattr__(self, "_content", dict(values))

    def __getattr__(self, key: str):
        try:
            return self._content[key]
        except KeyError as exc:
            raise AttributeError(key) from exc
