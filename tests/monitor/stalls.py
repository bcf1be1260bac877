"""Real compile stalls for the in-progress tests: a registered backend that blocks inside Dynamo's compile until the
test releases it (a threading.Event in this process, a file across processes), and the compile run on a thread."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

STALL_LIMIT_S = 120.0
"""Longest a gate holds a compile even if the test never releases it (a failing test must not hang)."""
BACKEND = "cc_stall_gate"
"""Backend name for contracts (`backend = "cc_stall_gate"`): compiles pass through the current `Gate`."""


class Gate:
    """Blocks each compile that reaches the backend while `closed`; `entered` is set once a compile is inside."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.compiles = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any) -> Callable[..., Any]:
        self.compiles += 1
        self.entered.set()
        self.release.wait(STALL_LIMIT_S)
        return gm.forward

    def open(self) -> None:
        """Let every waiting and later compile through."""
        self.release.set()


_current: list[Gate] = [Gate()]


def use(gate: Gate) -> Gate:
    """Route the registered backend to `gate` (one backend name for the session: names register once)."""
    _current[0] = gate
    return gate


@torch._dynamo.register_backend(name=BACKEND)
def _backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable[..., Any]:
    return _current[0](gm, example_inputs)


def file_gate(release: str, entered: str) -> Callable[..., Any]:
    """A backend for another process: touches `entered`, then blocks until the file `release` exists (bounded)."""

    def backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Callable[..., Any]:
        open(entered, "w").close()
        deadline = time.monotonic() + STALL_LIMIT_S
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.05)
        return gm.forward

    return backend


class Call:
    """Run `fn()` on a thread (the compile blocks there while the test looks at the monitor)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.result: Any = None

        def run() -> None:
            try:
                self.result = fn()
            except BaseException as exc:  # handed to the test thread by `join`
                self.error = exc

        self.thread = threading.Thread(target=run, name="stalled-step", daemon=True)
        self.thread.start()

    def join(self, timeout: float = STALL_LIMIT_S) -> Any:
        """Wait for the call; re-raise its exception here."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the stalled call did not return"
        if self.error is not None:
            raise self.error
        return self.result
