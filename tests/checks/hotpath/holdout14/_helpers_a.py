"""Library-style helpers for author A's cases (stand-ins for code that lives in other packages)."""
from __future__ import annotations

from typing import Callable

import torch


class MemoryStashingManager:
    """Stand-in for torchrec's MemoryStashingManager: class-level registry of pending stash callbacks.

    The train pipeline enqueues one `free_hbm`-style callback per embedding lookup after the sparse forward;
    `execute_pending_stashes` drains the queue (torchrec runs it from a forward pre-hook on `stash_site_fqn`).
    """

    _pending: list[Callable[[], None]] = []
    _stashed: dict[str, torch.Tensor] = {}

    @classmethod
    def enqueue_stash(cls, name: str, tensor: torch.Tensor) -> None:
        def free_hbm() -> None:
            cls._stashed[name] = tensor.detach().to("cpu", copy=True)  # D2H copy into pinned host buffer
            tensor.untyped_storage().resize_(0)  # release the device storage

        cls._pending.append(free_hbm)

    @classmethod
    def execute_pending_stashes(cls) -> None:
        while cls._pending:
            cls._pending.pop(0)()

    @classmethod
    def reset(cls) -> None:
        cls._pending.clear()
        cls._stashed.clear()
