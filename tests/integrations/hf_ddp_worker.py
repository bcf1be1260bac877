"""One process of a two-process HF Trainer run on CPU (gloo): `python -m tests.integrations.hf_ddp_worker CONTRACT`
with the job's environment (tests/distributed/launch.py) and `LENGTHS`, this process's sequence lengths, one example
per step. Prints one line `RESULT {json}`: the step the callback stopped at, the steps run, whether it breached."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from contract.integrations.hf import CompileContractCallback
from tests.integrations import hf_setup


def main(path: str, lengths: list[int]) -> None:
    """Train under the contract; say what this process saw."""
    out = Path(os.environ.get("OUT_DIR", ".")) / f"rank{os.environ['RANK']}"
    trainer = hf_setup.trainer(out, lengths, ddp_backend="gloo")
    cb = CompileContractCallback(path, trainer, warmup_steps=1, serve=False)
    trainer.add_callback(cb)
    trainer.train()
    snap = cb.monitor.snapshot()["layers"]
    result = {
        "stopped_at": cb.stopped_at,
        "global_step": trainer.state.global_step,
        "processes": trainer.accelerator.num_processes,
        "breached": snap["breached"],
    }
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [int(n) for n in os.environ["LENGTHS"].split(",")])
