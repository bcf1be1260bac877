"""One rank of the 2-rank report test: gloo process group, monitor with an events file; rank 1 changes its input
shape at step 2 (a recompile after warm-up), rank 0 never does. Usage: python rank_worker.py CONTRACT (with
MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE set, as srun does)."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

import monitor
from contract.binding.apply import apply
from contract.pipeline import check


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)
        self.gate = nn.Linear(1, 1)
        self.register_buffer("one", torch.ones(1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.body(x))) * self.gate(self.one)  # gate's input never changes shape


def main(contract: str) -> int:
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    model = Net()
    _, binding, findings = check(contract, model)
    assert binding is not None, findings
    apply(binding)
    with monitor.start(binding, serve=False) as mon:
        for i in range(4):
            rows = 6 if rank == 1 and i >= 2 else 4
            with torch.no_grad():
                total = model(torch.randn(rows, 8)).sum().reshape(1)
            dist.all_reduce(total)
            if i == 0:
                mon.mark_warm()
        dist.barrier()
    leave_last_if_store_host(rank, Path(contract).parent)
    return 0


def leave_last_if_store_host(rank: int, rundir: Path) -> None:
    """Rank 0 hosts the rendezvous store (srun-style launch): it leaves the group after rank 1 has, so rank 1's
    teardown never finds the store gone (gloo then aborts the process in its destructor)."""
    done = rundir / "rank1-left"
    if rank == 1:
        dist.destroy_process_group()
        done.touch()
        return
    deadline = time.monotonic() + 60
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    dist.destroy_process_group()


if __name__ == "__main__":
    code = main(sys.argv[1])
    # Skip interpreter finalization: under load, gloo's C++ threads can still be torn down there and abort the
    # process ("terminate called without an active exception", pytorch/pytorch#179291) after the work is done.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
