"""Library-style helpers for the holdout4 (B) cases: code that lives "in another module" of the reported project.

Each helper mirrors the shape of the library code named in the case that imports it (PyG backend heuristics,
DeepSpeed's accelerator and nvtx decorator, torchtune's KV cache, a wandb-like experiment logger, a torchrl-like
replay storage). Nothing here is imported by the scanner or the measurement harness.
"""

from __future__ import annotations

import functools
import multiprocessing
import time

import torch
from torch import nn

# --- torch_geometric.backend (pyg-team/pytorch_geometric#8467, #8783) -------------------------------------------

use_segment_matmul: bool | None = None
"""Global override; None means "decide with the heuristic"."""

_SEGMENT_WEIGHTS = torch.tensor([-0.5, 0.3, 0.1, 0.1])
_SEGMENT_BIAS = 0.25


def use_segment_matmul_heuristic(num_segments: int, max_segment_size: int, in_channels: int, out_channels: int) -> bool:
    """Hard-coded linear heuristic: is the segment matmul kernel faster than a per-relation loop?"""
    x = torch.tensor([num_segments, max_segment_size, in_channels, out_channels], dtype=torch.float)
    score = x.log1p() @ _SEGMENT_WEIGHTS + _SEGMENT_BIAS
    return bool(score > 0)


# --- deepspeed.accelerator / deepspeed.utils.nvtx (deepspeedai/DeepSpeed#5697) -----------------------------------


class _CPUAccelerator:
    """Stand-in for `get_accelerator()` on a host without NVTX: ranges are kept on a host-side stack with a clock
    reading, the way a profiler range is opened and closed around every instrumented call."""

    def __init__(self) -> None:
        self.ranges: list[tuple[str, int]] = []

    def range_push(self, msg: str) -> None:
        self.ranges.append((msg, time.perf_counter_ns()))

    def range_pop(self) -> None:
        if self.ranges:
            self.ranges.pop()


_ACCELERATOR = _CPUAccelerator()


def get_accelerator() -> _CPUAccelerator:
    return _ACCELERATOR


enable_nvtx = True
"""deepspeed.utils.nvtx.enable_nvtx: DeepSpeedEngine.compile() sets it to False before compiling (the fix)."""


def instrument_w_nvtx(func):
    """Decorator that records a range around every call (deepspeed.utils.nvtx.instrument_w_nvtx)."""

    @functools.wraps(func)
    def wrapped_fn(*args, **kwargs):
        if enable_nvtx:
            get_accelerator().range_push(func.__qualname__)
        ret_val = func(*args, **kwargs)
        if enable_nvtx:
            get_accelerator().range_pop()
        return ret_val

    return wrapped_fn


# --- torchtune.modules.kv_cache (meta-pytorch/torchtune#1663, #2564) ---------------------------------------------


class KVCache(nn.Module):
    """torchtune's KV cache before #1663: the fill level is a Python int bumped in `update()`."""

    def __init__(self, batch_size: int, max_seq_len: int, num_heads: int, head_dim: int) -> None:
        super().__init__()
        shape = (batch_size, num_heads, max_seq_len, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)
        self.size = 0

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.size = 0

    def update(self, k_val: torch.Tensor, v_val: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = k_val.shape[2]
        self.k_cache[:, :, self.size : self.size + seq_len] = k_val
        self.v_cache[:, :, self.size : self.size + seq_len] = v_val
        self.size += seq_len
        return self.k_cache, self.v_cache


class PositionKVCache(nn.Module):
    """torchtune's KV cache after #1663: the write positions are a tensor buffer advanced in place."""

    def __init__(self, batch_size: int, max_seq_len: int, num_heads: int, head_dim: int) -> None:
        super().__init__()
        shape = (batch_size, num_heads, max_seq_len, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("cache_pos", torch.arange(0, max_seq_len), persistent=False)

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.cache_pos -= self.cache_pos[0].clone()

    def update(self, k_val: torch.Tensor, v_val: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = k_val.shape[2]
        positions = self.cache_pos[:seq_len]
        self.k_cache.index_copy_(2, positions, k_val)
        self.v_cache.index_copy_(2, positions, v_val)
        self.cache_pos.add_(seq_len)
        return self.k_cache, self.v_cache


# --- a wandb-like experiment handle (Lightning-AI/pytorch-lightning#17214) ---------------------------------------


class Run:
    """`self.logger.experiment` of a WandbLogger: `log()` turns every value into a Python number for the row."""

    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []
        self.step = 0

    def log(self, row: dict[str, object]) -> None:
        record = {k: float(v) if isinstance(v, torch.Tensor) else v for k, v in row.items()}
        record["_step"] = self.step
        self.rows.append(record)
        self.step += 1


class WandbLogger:
    def __init__(self) -> None:
        self.experiment = Run()


# --- a torchrl-like replay storage (pytorch/rl#2501) -------------------------------------------------------------


class LazyTensorStorage(nn.Module):
    """Ring storage written under a multiprocessing lock; the write cursor is a tensor buffer."""

    def __init__(self, max_size: int, width: int) -> None:
        super().__init__()
        self.max_size = max_size
        self.register_buffer("data", torch.zeros(max_size, width), persistent=False)
        self.register_buffer("cursor", torch.zeros((), dtype=torch.long), persistent=False)
        self._write_lock = multiprocessing.Lock()

    def extend(self, rows: torch.Tensor) -> torch.Tensor:
        with self._write_lock:
            index = (self.cursor + torch.arange(rows.shape[0])) % self.max_size
            self.data.index_copy_(0, index, rows)
            self.cursor.copy_((self.cursor + rows.shape[0]) % self.max_size)
        return index
