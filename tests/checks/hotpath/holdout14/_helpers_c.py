"""Library-style stand-ins used by author C's cases (spiking-neuron memory modules, caches, trackers)."""
from __future__ import annotations

import copy

import torch
from torch import nn


# --- spikingjelly.activation_based.base / functional (stand-in) -----------------------------------------------
class MemoryModule(nn.Module):
    """Keeps stateful neuron variables in `_memories`, readable as attributes; `reset()` restores the reset values."""

    def __init__(self) -> None:
        super().__init__()
        self._memories: dict[str, object] = {}
        self._memories_rv: dict[str, object] = {}

    def register_memory(self, name: str, value: object) -> None:
        self._memories[name] = value
        self._memories_rv[name] = copy.deepcopy(value)

    def reset(self) -> None:
        for key in self._memories.keys():
            self._memories[key] = copy.deepcopy(self._memories_rv[key])

    def __getattr__(self, name: str):
        if "_memories" in self.__dict__:
            memories = self.__dict__["_memories"]
            if name in memories:
                return memories[name]
        return super().__getattr__(name)

    def __setattr__(self, name: str, value) -> None:
        _memories = self.__dict__.get("_memories")
        if _memories is not None and name in _memories:
            _memories[name] = value
        else:
            super().__setattr__(name, value)


def reset_net(net: nn.Module) -> None:
    """functional.reset_net: reset every stateful module after a batch."""
    for m in net.modules():
        if hasattr(m, "reset") and isinstance(m, MemoryModule):
            m.reset()


# --- transformers.cache_utils.DynamicCache (stand-in) ----------------------------------------------------------
class DynamicCache:
    """Per-layer key/value lists that grow with `update`."""

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []
        self.value_cache: list[torch.Tensor] = []

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key)
            self.value_cache.append(value)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    @classmethod
    def from_legacy_cache(cls, legacy: tuple[tuple[torch.Tensor, torch.Tensor], ...]) -> "DynamicCache":
        cache = cls()
        for k, v in legacy:
            cache.key_cache.append(k)
            cache.value_cache.append(v)
        return cache

    def to_legacy_cache(self) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
        return tuple(zip(self.key_cache, self.value_cache))


# --- lerobot.policies.pi0.modeling_pi0 / smolvla helpers (stand-in) ----------------------------------------------
@torch.compiler.disable
def make_att_2d_masks(pad_masks: torch.Tensor, att_masks: torch.Tensor) -> torch.Tensor:
    """Kept out of compiled graphs (inductor miscompiled its cumsum), so every compiled caller breaks here."""
    if att_masks.ndim != 2:
        raise ValueError(att_masks.ndim)
    if pad_masks.ndim != 2:
        raise ValueError(pad_masks.ndim)
    cumsum = torch.cumsum(att_masks, dim=1)
    att_2d_masks = cumsum[:, None, :] <= cumsum[:, :, None]
    pad_2d_masks = pad_masks[:, None, :] * pad_masks[:, :, None]
    return att_2d_masks & pad_2d_masks


# --- vllm.forward_context (stand-in) ------------------------------------------------------------------------------
class ForwardContext:
    def __init__(self, no_compile_layers: dict, attn_metadata: object) -> None:
        self.no_compile_layers = no_compile_layers
        self.attn_metadata = attn_metadata


_forward_context: ForwardContext | None = None


def get_forward_context() -> ForwardContext:
    assert _forward_context is not None, "forward context is not set"
    return _forward_context


class set_forward_context:
    """Installed by the model runner around every model execution."""

    def __init__(self, attn_metadata: object, static_forward_context: dict) -> None:
        self.ctx = ForwardContext(static_forward_context, attn_metadata)

    def __enter__(self) -> ForwardContext:
        global _forward_context
        self.prev = _forward_context
        _forward_context = self.ctx
        return self.ctx

    def __exit__(self, *exc) -> None:
        global _forward_context
        _forward_context = self.prev


# --- deepspeed.utils.logging (stand-in) ---------------------------------------------------------------------------
import logging as _logging

ds_logger = _logging.getLogger("DeepSpeed")


def log_dist(message: str, ranks: list[int] | None = None, level: int = _logging.INFO) -> None:
    """Log on the given ranks only (rank 0 here)."""
    my_rank = 0
    if ranks is None or my_rank in ranks:
        ds_logger.log(level, f"[Rank {my_rank}] {message}")
