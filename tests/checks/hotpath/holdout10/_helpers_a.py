"""Library-style stand-ins for author A's holdout10 cases (a torchmetrics-like Metric, an HF-like static KV cache,
a torchrec-like KeyedJaggedTensor)."""
from __future__ import annotations

import torch
from torch import nn


class Metric(nn.Module):
    """torchmetrics.Metric in miniature: states are buffers, `update()` bumps the Python int `_update_count`."""

    def __init__(self) -> None:
        super().__init__()
        self._update_count = 0
        self._computed = None

    def forward(self, *args, **kwargs):
        self.update(*args, **kwargs)
        return self.compute()

    def update(self, *args, **kwargs) -> None:
        self._computed = None
        self._update_count += 1
        self._update(*args, **kwargs)

    def _update(self, *args, **kwargs) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class WindowedMSE(Metric):
    """A RecMetric-like windowed mean squared error."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("sum_sq", torch.zeros(()))
        self.register_buffer("n", torch.zeros(()))

    def _update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        self.sum_sq += ((preds - target) ** 2).sum().detach()
        self.n += target.numel()

    def compute(self) -> torch.Tensor:
        return self.sum_sq / self.n.clamp(min=1)


class TensorCountMetric(nn.Module):
    """The same metric with the update count kept as a buffer (torchmetrics' fix direction): no Python int state."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("_update_count", torch.zeros((), dtype=torch.long))
        self.register_buffer("sum_sq", torch.zeros(()))
        self.register_buffer("n", torch.zeros(()))

    def forward(self, preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        self._update_count += 1
        self.sum_sq += ((preds - target) ** 2).sum().detach()
        self.n += target.numel()
        return self.sum_sq / self.n.clamp(min=1)


class StaticCache:
    """transformers.cache_utils.StaticCache in miniature: preallocated k/v plus a Python int `seen_tokens`."""

    def __init__(self, max_len: int = 32, dim: int = 8) -> None:
        self.key_cache = torch.zeros(1, max_len, dim)
        self.value_cache = torch.zeros(1, max_len, dim)
        self.seen_tokens = 0

    def update(self, k: torch.Tensor, v: torch.Tensor, cache_position: torch.Tensor):
        self.key_cache.index_copy_(1, cache_position, k)
        self.value_cache.index_copy_(1, cache_position, v)
        self.seen_tokens += k.shape[1]
        return self.key_cache, self.value_cache

    def get_seq_length(self) -> int:
        return self.seen_tokens


class KeyedJaggedTensor:
    """torchrec.sparse.KeyedJaggedTensor in miniature (keys, values, offsets; lengths per key computed lazily)."""

    def __init__(self, keys: list[str], values: torch.Tensor, offsets: torch.Tensor, stride: int) -> None:
        self._keys = keys
        self._values = values
        self._offsets = offsets
        self._stride = stride
        self._length_per_key: list[int] | None = None

    def keys(self) -> list[str]:
        return self._keys

    def values(self) -> torch.Tensor:
        return self._values

    def offsets(self) -> torch.Tensor:
        return self._offsets

    def stride(self) -> int:
        return self._stride

    def lengths(self) -> torch.Tensor:
        return torch.diff(self._offsets)

    def length_per_key(self) -> list[int]:
        if self._length_per_key is None:
            # torchrec's _maybe_compute_length_per_key (offsets branch) before pytorch/torchrec#2306
            self._length_per_key = torch.sum(torch.diff(self._offsets).view(-1, self._stride), dim=1).tolist()
        return self._length_per_key

    def length_per_key_tensor(self) -> torch.Tensor:
        return torch.sum(torch.diff(self._offsets).view(-1, self._stride), dim=1)
