"""One rank of the end-to-end job: join the job (gloo), check + apply a contract (the ranks' one verdict), start the
monitor, train on command (an all-reduce every step, as a real job), serve metrics.

Run as `python -m tests.ops.rank CONTRACT STATE_DIR {steady,breach}` with MASTER_ADDR/MASTER_PORT/RANK/LOCAL_RANK/
WORLD_SIZE set. Both ranks run the same steps in lockstep; the `breach` rank's batch size changes after warm-up
(`dynamic = false`: a recompile per step) while the `steady` rank's does not. Protocol
(files in STATE_DIR, written atomically): `rank<R>.ready` {port} once the monitor serves (every series at 0, nothing
compiled yet); the rank then waits for `go` to exist, compiles, writes `rank<R>.done` {snapshot}, and keeps serving
until `stop` exists or its lifetime ends.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

import monitor
from contract.binding.apply import apply
from contract.pipeline import check

LIFETIME_S = 240.0
"""Upper bound on a rank's life even if the test never writes `stop` (it is killed earlier by the fixture)."""


class Model(nn.Module):
    """Two regions: `encoder` sees the batch dimension, `head` always gets a (1, 8) input (never recompiles)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x).mean(0, keepdim=True))


def loss(out: torch.Tensor) -> torch.Tensor:
    """A compiled loss outside every region (as trainers compile theirs): the monitor counts it as unclaimed."""
    return out.pow(2).mean()


def write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def wait_file(path: Path, deadline: float) -> bool:
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main(contract: str, state: Path, mode: str) -> int:
    deadline = time.monotonic() + LIFETIME_S
    rank = os.environ["RANK"]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=LIFETIME_S))
    model = Model()
    _, binding, findings = check(contract, model)
    if binding is None or any(f.severity == "error" for f in findings):
        print(f"rank {rank}: contract refused or did not bind: {[f.message for f in findings]}", file=sys.stderr)
        return 2
    apply(binding)
    with monitor.start(binding) as mon:
        write(state / f"rank{rank}.ready", {"port": mon.port})
        if not wait_file(state / "go", deadline):
            return 3
        compiled_loss = torch.compile(loss, backend="eager")
        with torch.no_grad():
            for _ in range(3):  # warm-up: one compile per region, then cache hits
                dist.all_reduce(compiled_loss(model(torch.randn(4, 8))))
            mon.mark_warm()
            for batch in (5, 6, 7):  # dynamic = false: on the breach rank, each new batch size recompiles `encoder`
                dist.all_reduce(model(torch.randn(batch if mode == "breach" else 4, 8)))
        write(state / f"rank{rank}.done", {"snapshot": mon.snapshot()})
        wait_file(state / "stop", deadline)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
