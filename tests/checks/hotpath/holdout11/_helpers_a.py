"""Library-style stand-ins used by author A's cases (a step tracker, a FLOPs profiler, an eval loader)."""
from __future__ import annotations

import logging

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode
from torch.utils._python_dispatch import TorchDispatchMode

logger = logging.getLogger("trainer.tracker")


class ForwardTracker:
    """Registers a forward pre-hook on a module that records what goes in (like an FSDP/activation tracker)."""

    def __init__(self) -> None:
        self.calls = 0
        self.handles: list[object] = []

    def _pre_forward(self, module: nn.Module, args: tuple) -> tuple:
        logger.info("pre-forward %s with %d inputs", type(module).__name__, len(args))
        return args

    def attach(self, module: nn.Module) -> None:
        self.handles.append(module.register_forward_pre_hook(self._pre_forward))


class FlopsProfiler:
    """Counts model FLOPs once to report MFU, the way training scripts do on their first step."""

    def __init__(self) -> None:
        self.flops_per_step: int | None = None

    def measure(self, fn, *args):
        with FlopCounterMode(display=False) as counter:
            out = fn(*args)
        self.flops_per_step = counter.get_total_flops()
        return out


class AllocationTracker(TorchDispatchMode):
    """An infra-style dispatch mode counting ops and bytes allocated; declares itself an infra mode."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        return func(*args, **(kwargs or {}))


def eval_batches(num_samples: int, batch_size: int, dim: int = 8, pad_last: bool = False):
    """Yields (inputs, valid) batches of a fixed dataset; the tail batch is short unless pad_last."""
    gen = torch.Generator().manual_seed(1)
    data = torch.randn(num_samples, dim, generator=gen)
    for start in range(0, num_samples, batch_size):
        chunk = data[start : start + batch_size]
        valid = chunk.shape[0]
        if pad_last and valid < batch_size:
            chunk = torch.cat([chunk, chunk.new_zeros(batch_size - valid, dim)])
        yield chunk, valid


class GeometricSchedule:
    """A noise/temperature schedule object the loop advances between calls; `t` is a Python float."""

    def __init__(self, start: float = 16.0, ratio: float = 0.5) -> None:
        self.start = start
        self.t = start
        self.r = ratio

    def reset(self) -> None:
        self.t = self.start

    def b(self) -> None:
        self.t = self.t * self.r


rotary_logger = logging.getLogger("model.rotary")


def _maybe_log_shape(x: torch.Tensor) -> torch.Tensor:
    rotary_logger.debug("rotary input %s", tuple(x.shape))
    return x


def apply_rotary(x: torch.Tensor) -> torch.Tensor:
    """Utility called from model code; it routes through a debug-logging helper two frames down."""
    x1, x2 = x.chunk(2, dim=-1)
    x = torch.cat([-x2, x1], dim=-1) * 0.5 + x
    x = _maybe_log_shape(x)
    return x


import time


class timeit:
    """torchrl-style timing context manager: accumulates wall time per name in a class-level registry."""

    _REG: dict[str, list[float]] = {}

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> "timeit":
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        elapsed = time.perf_counter() - self.t0
        total = self._REG.setdefault(self.name, [0.0, 0.0])
        total[0] += elapsed
        total[1] += 1

    @classmethod
    def erase(cls) -> None:
        cls._REG.clear()
