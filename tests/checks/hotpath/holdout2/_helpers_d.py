"""Library-style helpers the second hold-out's cases import from another module (as the reported code did)."""

from __future__ import annotations

import functools
import logging

import torch

_log = logging.getLogger("holdout2.helpers")


@functools.lru_cache(None)
def log_once(logger: logging.Logger, msg: str) -> None:
    """torchtune's `log_once`: log a message the first time it is seen (lru_cache remembers it)."""
    logger.info(msg)


def prepare_special_tokens(pad_token_id, eos_token_id):
    """transformers' generation helper: warns every call that the pad token falls back to eos."""
    _log.warning(f"Setting `pad_token_id` to `eos_token_id`:{eos_token_id} for open-end generation.")
    return eos_token_id if pad_token_id is None else pad_token_id


class EulerScheduler:
    """diffusers-style scheduler: `step()` advances a Python `_step_index` and reads its sigma table with it."""

    def __init__(self, steps: int = 16) -> None:
        self.sigmas = torch.linspace(1.0, 0.0, steps + 1)
        self._step_index = None
        self._begin_index = None

    @property
    def step_index(self):
        return self._step_index

    def set_begin_index(self, begin_index: int = 0) -> None:
        self._begin_index = begin_index

    def _init_step_index(self) -> None:
        self._step_index = 0 if self._begin_index is None else self._begin_index

    def step(self, model_output: torch.Tensor, sample: torch.Tensor) -> torch.Tensor:
        if self._step_index is None:
            self._init_step_index()
        sigma, sigma_next = self.sigmas[self._step_index], self.sigmas[self._step_index + 1]
        prev = sample + (sigma_next - sigma) * model_output
        self._step_index += 1
        return prev
