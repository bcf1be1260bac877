"""Library-style helpers for holdout3 cases A (stand-ins for code that lives in transformers/diffusers/peft modules)."""

from __future__ import annotations

import contextlib
import functools
import logging

import torch

logger = logging.getLogger("holdout3.modeling_utils")


class LegacyStaticCache:
    """A pre-allocated KV cache that counts the tokens it has seen in a Python int (transformers before #29114)."""

    def __init__(self, max_batch_size: int, num_heads: int, max_cache_len: int, head_dim: int) -> None:
        shape = (max_batch_size, num_heads, max_cache_len, head_dim)
        self.key_cache = torch.zeros(shape)
        self.value_cache = torch.zeros(shape)
        self.seen_tokens = 0

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        start = self.seen_tokens
        end = start + key_states.shape[2]
        self.key_cache[:, :, start:end] = key_states
        self.value_cache[:, :, start:end] = value_states
        self.seen_tokens += key_states.shape[2]
        return self.key_cache, self.value_cache

    def reset(self) -> None:
        self.key_cache.zero_()
        self.value_cache.zero_()
        self.seen_tokens = 0


class StaticCache:
    """The compile-friendly cache: writes go to positions given by the caller's `cache_position` tensor."""

    def __init__(self, max_batch_size: int, num_heads: int, max_cache_len: int, head_dim: int) -> None:
        shape = (max_batch_size, num_heads, max_cache_len, head_dim)
        self.key_cache = torch.zeros(shape)
        self.value_cache = torch.zeros(shape)

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, cache_position: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.key_cache.index_copy_(2, cache_position, key_states)
        self.value_cache.index_copy_(2, cache_position, value_states)
        return self.key_cache, self.value_cache


class DynamicCache:
    """A KV cache that grows by concatenation, one entry per layer (transformers DynamicCache)."""

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []
        self.value_cache: list[torch.Tensor] = []

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int):
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]


@functools.lru_cache(None)
def warning_once(message: str) -> None:
    """transformers.utils.logging's logger.warning_once: warn the first time a message is seen."""
    logger.warning(message)


@contextlib.contextmanager
def disable_adapter(model: torch.nn.Module):
    """Run the base model without its LoRA adapters (torchtune/peft style), e.g. for a DPO reference pass."""
    layers = [m for m in model.modules() if hasattr(m, "disabled")]
    for layer in layers:
        layer.disabled = True
    try:
        yield
    finally:
        for layer in layers:
            layer.disabled = False


class EulerDiscreteScheduler:
    """A diffusers-style scheduler: keeps `_step_index` and finds it from the timestep on the first step."""

    def __init__(self, num_train_timesteps: int = 1000) -> None:
        self.num_train_timesteps = num_train_timesteps
        self.timesteps = torch.empty(0)
        self.sigmas = torch.empty(0)
        self._step_index: int | None = None
        self._begin_index: int | None = None

    def set_timesteps(self, num_inference_steps: int) -> None:
        self.timesteps = torch.linspace(self.num_train_timesteps - 1, 0, num_inference_steps)
        self.sigmas = torch.cat([torch.linspace(1.0, 0.05, num_inference_steps), torch.zeros(1)])
        self._step_index = None

    def set_begin_index(self, begin_index: int = 0) -> None:
        self._begin_index = begin_index

    def index_for_timestep(self, timestep: torch.Tensor) -> int:
        indices = (self.timesteps == timestep).nonzero()
        pos = 1 if len(indices) > 1 else 0
        return indices[pos].item()

    def _init_step_index(self, timestep: torch.Tensor) -> None:
        if self._begin_index is None:
            self._step_index = self.index_for_timestep(timestep)
        else:
            self._step_index = self._begin_index

    @property
    def step_index(self) -> int | None:
        return self._step_index
