"""One rank of a Lightning DDP fit (gloo, CPU) under the adapter: `python -m tests.integrations.lightning_ddp_worker
CONTRACT` with the job's environment (tests/distributed/launch.py: LOCAL_RANK set, so Lightning takes the processes
as launched) and `LENGTHS`, this rank's comma-separated sequence lengths, one batch per step. Prints one line
`RESULT {json}`: the step the callback stopped at, the steps run, whether this rank breached."""

from __future__ import annotations

import json
import os
import sys

from contract.integrations.lightning import CompileContract
from tests.integrations import lightning_models as M


def main(path: str, lengths: list[int]) -> None:
    """Fit under the contract; say what this rank saw."""
    cb = CompileContract(path, warmup_steps=1, serve=False)
    model = M.Tiny()
    trainer = M.trainer(
        [cb], devices=2, strategy="ddp", max_steps=len(lengths), num_sanity_val_steps=1, use_distributed_sampler=False
    )
    trainer.fit(model, M.loader(lengths), M.loader(lengths[:1]))
    snap = cb.monitor.snapshot()["blocks"]
    result = {
        "stopped_at": cb.stopped_at,
        "train_steps": model.train_steps,
        "global_step": trainer.global_step,
        "breached": snap["breached"],
    }
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [int(n) for n in os.environ["LENGTHS"].split(",")])
