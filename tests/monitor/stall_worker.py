"""A monitored process (one rank of a plain multi-process job) whose compile can stall for real, for the stall tests.

Usage: `python -m tests.monitor.stall_worker CONTRACT STATE MODE` with RANK (and WORLD_SIZE, MASTER_ADDR, MASTER_PORT
for a gloo job; STALL_RANK: the rank whose compile blocks). Modes:
- `step`: compile the model (backend `cc_file_gate` blocks the STALL_RANK's compile until STATE/release exists), then
  all-reduce its output when WORLD_SIZE > 1 (the finished rank waits there for the compiling one, as in a real job);
- `thread-exit`: compile on a daemon thread and let the main thread return while it is blocked (interpreter exit);
- `hold-locks`: compile with Inductor (populating `<cache dir>/locks`), then hold every lock file there until
  STATE/stop exists (another process holding Inductor's cache locks).
Files written to STATE: `rank<R>.ready` {port}, `rank<R>.compiling` (the compile reached the backend),
`rank<R>.compiled`, `rank<R>.done`, `held`. Every wait is bounded by LIFETIME_S.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

LIFETIME_S = 180.0
"""Upper bound on the process's life (the tests kill it earlier)."""


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.lin(x))  # GELU: Inductor emits a C++ kernel (and takes a cache lock)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = Block()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def wait_file(path: Path, deadline: float) -> bool:
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def register_gate(state: Path, rank: str, deadline: float) -> None:
    """Backend `cc_file_gate`: announces the compile, then blocks the STALL_RANK's compile until STATE/release."""
    stalls = rank == os.environ.get("STALL_RANK", "0")

    @torch._dynamo.register_backend(name="cc_file_gate")
    def gate(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        (state / f"rank{rank}.compiling").touch()
        if stalls:
            wait_file(state / "release", deadline)
        return gm.forward


def hold_locks(state: Path, deadline: float) -> int:
    from filelock import FileLock

    with torch.no_grad():
        torch.compile(Model(), backend="inductor")(torch.ones(2, 8))
    locks = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]) / "locks"
    held = [FileLock(str(p)) for p in sorted(locks.glob("*.lock"))]
    for lock in held:
        lock.acquire()
    write(state / "held", {"locks": [lock.lock_file for lock in held]})
    wait_file(state / "stop", deadline)
    return 0


def main(contract: str, state: Path, mode: str) -> int:
    deadline = time.monotonic() + LIFETIME_S
    rank = os.environ.get("RANK", "0")
    if mode == "hold-locks":
        return hold_locks(state, deadline)
    register_gate(state, rank, deadline)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        import torch.distributed as dist

        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=LIFETIME_S))
    import monitor
    from contract.binding.apply import apply
    from contract.pipeline import check

    model = Model()
    _, binding, findings = check(contract, model)
    if binding is None:
        print(f"rank {rank}: contract did not bind: {[f.message for f in findings]}", file=sys.stderr)
        return 2
    if mode == "thread-exit":
        # Runs after the monitor's own exit handler (atexit is last in, first out): the process ends there, before the
        # interpreter's finalization, which can crash a daemon thread parked inside torch's C++ frames (seen once as
        # SIGSEGV under load; torch's and CPython's teardown, not the monitor's: the events are written by then).
        atexit.register(os._exit, 0)
    mon = monitor.start(apply(binding))
    write(state / f"rank{rank}.ready", {"port": mon.port})
    step = Step(model, world)
    if mode == "thread-exit":
        threading.Thread(target=step, daemon=True).start()
        wait_file(state / f"rank{rank}.compiling", deadline)
        return 0  # the interpreter exits while the compile runs on the daemon thread
    step()
    write(state / f"rank{rank}.done", {"snapshot": mon.snapshot()})
    wait_file(state / "stop", deadline)
    mon.stop()
    return 0


class Step:
    """One training step: the compiled model, then an all-reduce of its output across the job's ranks."""

    def __init__(self, model: nn.Module, world: int) -> None:
        self.model, self.world = model, world

    def __call__(self) -> None:
        with torch.no_grad():
            out = self.model(torch.ones(2, 8))
        (STATE / f"rank{os.environ.get('RANK', '0')}.compiled").touch()
        if self.world > 1:
            import torch.distributed as dist

            dist.all_reduce(out)


STATE = Path(sys.argv[2]) if __name__ == "__main__" else Path(".")

if __name__ == "__main__":
    code = main(sys.argv[1], STATE, sys.argv[3])
    sys.stdout.flush()
    sys.stderr.flush()
    if sys.argv[3] != "thread-exit":
        os._exit(code)  # skip finalization: gloo's threads can abort a process torn down under load (pytorch#179291)
    sys.exit(code)
