"""Library-style code shared by author B's cases (h21-h27, c11-c16).

Stand-ins, reduced to a few lines each, for the library code the reports were about: kornia's augmentation base
class and version helpers, a transformers-style static KV cache and a MONAI-style MetaTensor.
"""

from __future__ import annotations

from typing import Any

import torch
from packaging import version as _pkg_version
from torch import nn

# --------------------------------------------------------------------------------------------------------------
# kornia.core._compat: torch version checks (kornia#3802)


def torch_version_ge_parsed_per_call(major: int, minor: int) -> bool:
    """The pre-fix kornia helper: parses torch.__version__ with `packaging` on every call."""
    current = _pkg_version.parse(torch.__version__.partition("+")[0])
    return current >= _pkg_version.parse(f"{major}.{minor}")


def _parse_torch_version() -> tuple[int, int, int]:
    parts = []
    for piece in torch.__version__.partition("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


_TORCH_VERSION = _parse_torch_version()
"""Parsed once at import (the fix in kornia#3802)."""


def torch_version_ge(major: int, minor: int) -> bool:
    """The fixed kornia helper: a pure integer-tuple comparison Dynamo constant-folds."""
    return _TORCH_VERSION >= (major, minor, 0)


# --------------------------------------------------------------------------------------------------------------
# kornia.augmentation.base: one inherited forward for every augmentation (kornia#4658, #4659)


class AugmentationBase2D(nn.Module):
    """Every augmentation inherits this forward: sample parameters with the torch RNG, gate by p, apply."""

    def __init__(self, p: float = 1.0) -> None:
        super().__init__()
        self.p = p

    def generate_parameters(self, shape: torch.Size) -> dict[str, torch.Tensor]:
        return {"factor": torch.rand(shape[0], 1, 1, 1)}

    def apply_transform(self, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        params = self.generate_parameters(x.shape)
        gate = (torch.rand(x.shape[0], 1, 1, 1) < self.p).to(x.dtype)
        return gate * self.apply_transform(x, params) + (1 - gate) * x


# --------------------------------------------------------------------------------------------------------------
# transformers.cache_utils.StaticCache, two write-index strategies (transformers#35299)


class StaticCacheSeenTokens:
    """The old strategy: the cache keeps its write index as a Python int it advances itself."""

    is_compileable = True

    def __init__(self, batch: int, heads: int, max_len: int, head_dim: int) -> None:
        self.key_cache = torch.zeros(batch, heads, max_len, head_dim)
        self.value_cache = torch.zeros(batch, heads, max_len, head_dim)
        self.seen_tokens = 0

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        start = self.seen_tokens
        self.key_cache[:, :, start : start + k.shape[2]] = k
        self.value_cache[:, :, start : start + v.shape[2]] = v
        self.seen_tokens += k.shape[2]
        return self.key_cache, self.value_cache

    def reset(self) -> None:
        self.key_cache.zero_()
        self.value_cache.zero_()
        self.seen_tokens = 0


class StaticCacheByPosition:
    """The current strategy: the caller passes `cache_position` as a tensor and the cache writes with index_copy_."""

    is_compileable = True

    def __init__(self, batch: int, heads: int, max_len: int, head_dim: int) -> None:
        self.key_cache = torch.zeros(batch, heads, max_len, head_dim)
        self.value_cache = torch.zeros(batch, heads, max_len, head_dim)

    def update(
        self, k: torch.Tensor, v: torch.Tensor, cache_position: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.key_cache.index_copy_(2, cache_position, k)
        self.value_cache.index_copy_(2, cache_position, v)
        return self.key_cache, self.value_cache

    def reset(self) -> None:
        self.key_cache.zero_()
        self.value_cache.zero_()


# --------------------------------------------------------------------------------------------------------------
# monai.data.MetaTensor (MONAI#7375)


class MetaTensor(torch.Tensor):
    """A tensor subclass that carries per-image metadata and propagates it through every torch op."""

    @staticmethod
    def __new__(cls, x: torch.Tensor, meta: dict[str, Any] | None = None) -> MetaTensor:
        return torch.Tensor._make_subclass(cls, x)

    def __init__(self, x: torch.Tensor, meta: dict[str, Any] | None = None) -> None:
        self.meta = dict(meta or {})
        self.applied_operations: list[dict[str, Any]] = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        out = super().__torch_function__(func, types, args, kwargs)
        source = next((a for a in args if isinstance(a, MetaTensor)), None)
        if isinstance(out, MetaTensor) and source is not None:
            out.meta = dict(getattr(source, "meta", {}))
            out.applied_operations = list(getattr(source, "applied_operations", []))
        return out

    def as_tensor(self) -> torch.Tensor:
        return self.as_subclass(torch.Tensor)


class ImageLoader:
    """A MONAI-style dataset that yields MetaTensors with each image's own filename and affine."""

    def __init__(self, n: int = 4, size: int = 8) -> None:
        generator = torch.Generator().manual_seed(0)
        self.images = torch.rand(n, 1, 1, size, size, generator=generator)
        self.labels = torch.rand(n, 1, 1, size, size, generator=generator)

    def __getitem__(self, i: int) -> dict[str, MetaTensor]:
        k = i % len(self.images)
        meta = {"filename_or_obj": f"case_{k:03d}.nii.gz", "affine": torch.eye(4) * (1.0 + 0.1 * k), "spatial_shape": (8, 8)}
        return {"image": MetaTensor(self.images[k], meta), "label": MetaTensor(self.labels[k], meta)}
