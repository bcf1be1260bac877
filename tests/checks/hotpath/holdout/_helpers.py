"""Helper functions that hold-out cases import from this sibling module (not from the case file itself).

Reduced from pytorch/pytorch#132165 (functions in an imported module that mutate module-scoped state, called from
compiled code) and from training scripts that keep their bookkeeping in a utils module.
"""
from __future__ import annotations

import torch

_TICKS = 0
PHASES = ("warmup", "main", "cooldown")


def count_call(module: torch.nn.Module) -> None:
    """Bookkeeping helper: bump a Python int on the module it is given."""
    module.n_calls = getattr(module, "n_calls", 0) + 1


def next_tick() -> int:
    """Module-scoped Python counter, incremented on every call."""
    global _TICKS
    _TICKS += 1
    return _TICKS


def reset_ticks() -> None:
    global _TICKS
    _TICKS = 0


def set_phase(module: torch.nn.Module, step: int) -> None:
    """Called by the training loop: pick the curriculum phase for this step and store it on the module."""
    module.phase = PHASES[min(step // 3, len(PHASES) - 1)]


def scaled_residual(x: torch.Tensor, y: torch.Tensor, alpha: float = 0.5) -> torch.Tensor:
    """Pure tensor helper: no Python state is read or written."""
    return x + alpha * y


def record_loss(log: dict, loss: torch.Tensor) -> None:
    """Loop-side helper: append a detached scalar to a Python log (only ever called outside the compiled region)."""
    log.setdefault("loss", []).append(float(loss))
