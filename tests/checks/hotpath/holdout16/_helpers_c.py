"""Library-style stand-ins shared by author C's cases (h41-h50, c21-c26).

Each block mirrors the shape of the code in the project a case was reduced from: a torchrl-like replay storage,
a FlashInfer-like lazily JIT-bootstrapped sampling module as TensorRT-LLM calls it, Megatron-like THD packing
helpers, and an unsloth-like shared RMSNorm kernel. Nothing here imports those projects.
"""

from __future__ import annotations

import datetime
import functools
import os
import tempfile
import types
from multiprocessing import Value as _mp_value

import torch
from torch import nn

# ----------------------------------------------------------------------------------------------------------------
# torchrl-like replay storage (torchrl/data/replay_buffers/storages.py)
# ----------------------------------------------------------------------------------------------------------------


class TensorStorage:
    """A ring storage whose length lives in a `multiprocessing.Value` so that collector workers can share it.

    `compilable=True` is torchrl's later switch: the length is kept as a plain Python int instead.
    """

    def __init__(self, max_size: int, dim: int, compilable: bool = False) -> None:
        self.max_size = max_size
        self._compilable = compilable
        self._storage = torch.zeros(max_size, dim)
        self._len = 0

    @property
    def _len(self) -> int:
        _len_value = self.__dict__.get("_len_value", None)
        if not self._compilable:
            if _len_value is None:
                _len_value = self._len_value = _mp_value("i", 0)
            return _len_value.value
        if _len_value is None:
            _len_value = self._len_value = 0
        return _len_value

    @_len.setter
    def _len(self, value: int) -> None:
        if not self._compilable:
            _len_value = self.__dict__.get("_len_value", None)
            if _len_value is None:
                _len_value = self._len_value = _mp_value("i", 0)
            _len_value.value = value
        else:
            self._len_value = value

    def __len__(self) -> int:
        return self._len

    def set(self, cursor: torch.Tensor, data: torch.Tensor) -> None:
        self._storage.index_copy_(0, cursor, data)
        self._len = min(self._len + data.shape[0], self.max_size)


class TensorCursorStorage:
    """The same ring storage with its write cursor and fill level kept as 0-d tensors updated in place."""

    def __init__(self, max_size: int, dim: int) -> None:
        self.max_size = max_size
        self._storage = torch.zeros(max_size, dim)
        self._cursor = torch.zeros((), dtype=torch.long)
        self._filled = torch.zeros((), dtype=torch.long)

    def set(self, data: torch.Tensor) -> None:
        n = data.shape[0]
        index = (self._cursor + torch.arange(n)) % self.max_size
        self._storage.index_copy_(0, index, data)
        self._cursor.copy_((self._cursor + n) % self.max_size)
        self._filled.copy_(torch.clamp(self._filled + n, max=self.max_size))


class RoundRobinWriter:
    """Writes each batch at the next positions of the ring, like torchrl's RoundRobinWriter."""

    def __init__(self, storage: TensorStorage) -> None:
        self._storage = storage

    def extend(self, data: torch.Tensor) -> None:
        n = data.shape[0]
        index = (torch.arange(n) + len(self._storage)) % self._storage.max_size
        self._storage.set(index, data)


# ----------------------------------------------------------------------------------------------------------------
# FlashInfer-like sampling ops as TensorRT-LLM's sampler/ops/flashinfer.py calls them
# ----------------------------------------------------------------------------------------------------------------

_JIT_DIR = tempfile.gettempdir()


def _jit_spec_is_aot(name: str) -> bool:
    """FlashInfer's JitSpec.is_aot: look for a prebuilt library on disk (os.stat underneath)."""
    return os.path.exists(os.path.join(_JIT_DIR, f"flashinfer_{name}_aot.so"))


def _top_k_top_p_from_probs(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p.unsqueeze(-1)
    filtered = torch.where(keep, sorted_probs, torch.zeros_like(sorted_probs))
    return torch.zeros_like(probs).scatter(-1, order, filtered / filtered.sum(-1, keepdim=True))


@functools.cache
def get_sampling_module() -> types.SimpleNamespace:
    """Lazy JIT bootstrap, cached with functools.cache: checks for an AOT build, stamps the build time."""
    built_at = datetime.datetime.now()
    source = "aot" if _jit_spec_is_aot("sampling") else "jit"
    return types.SimpleNamespace(top_k_top_p_renorm=_top_k_top_p_from_probs, source=source, built_at=built_at)


def flashinfer_renorm_probs(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """The plain-Python op wrapper: reaches the kernel through the cached bootstrap on every call."""
    return get_sampling_module().top_k_top_p_renorm(probs, top_p)


@torch.library.custom_op("holdout16c::renorm_probs", mutates_args=())
def renorm_probs_op(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """The same wrapper registered as a custom op: Dynamo sees one opaque node and never enters the bootstrap."""
    return get_sampling_module().top_k_top_p_renorm(probs, top_p)


@renorm_probs_op.register_fake
def _(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(probs)


# ----------------------------------------------------------------------------------------------------------------
# Megatron-like THD packing helpers (csa_utils/fused_sparse_attention.py)
# ----------------------------------------------------------------------------------------------------------------


def build_thd_compact_k_layout(cu_seqlens_k: torch.Tensor, total_k_rows: int, block: int) -> torch.Tensor:
    """Row map from packed key rows to (sequence, block) slots; sized by the host-side total_k_rows."""
    rows = torch.arange(total_k_rows)
    seq = torch.bucketize(rows, cu_seqlens_k[1:], right=True)
    return seq * block + rows % block


# ----------------------------------------------------------------------------------------------------------------
# unsloth-like shared RMSNorm kernel (unsloth_zoo/temporary_patches/gemma4_float32.py)
# ----------------------------------------------------------------------------------------------------------------


class Gemma4RMSNorm(nn.Module):
    """One class for every norm of the model: residual norms carry a scale, q/k norms of head width do not."""

    def __init__(self, dim: int, eps: float = 1e-6, with_scale: bool = True) -> None:
        super().__init__()
        self.eps = eps
        self.with_scale = with_scale
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.with_scale:
            normed = normed * self.weight.float()
        return normed.to(x.dtype)
