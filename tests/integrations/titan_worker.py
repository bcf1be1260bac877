"""One rank of a torchtitan-style job (gloo, CPU mesh): `python -m tests.integrations.titan_worker FORM CONTRACT`.
Builds the decoder, applies activation checkpointing, per-block compile (`FORM`: inplace or wrapped; `SKIP` names
blocks left uncompiled), FSDP2, then starts the engine-agnostic session (what a torchtitan trainer calls after
`parallelize`), trains four steps whose sequence length changes at the third. Prints `REFUSED <codes>` or
`SNAPSHOT {json}` (the region, the compile events, the unclaimed compiles)."""

from __future__ import annotations

import datetime
import json
import os
import sys

import torch
import torch.distributed as dist

from contract.integrations.session import Session
from contract.pipeline import ContractViolation
from tests.integrations import titan_like as T
from tests.monitor.conftest import Events


def main(form: str, path: str) -> int:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    from torch.distributed.device_mesh import init_device_mesh

    model = T.Decoder()
    T.apply_ac(model)
    T.apply_compile(model, "eager", form=form, skip=tuple(filter(None, os.environ.get("SKIP", "").split(","))))
    T.apply_fsdp(model, init_device_mesh("cpu", (dist.get_world_size(),)))
    events = Events()
    session = Session(path, warmup_steps=1, serve=False, logger=events)
    try:
        session.start(model)
    except ContractViolation as exc:
        print("REFUSED " + json.dumps(sorted({f.code for f in exc.findings if f.severity == "error"})), flush=True)
        print(str(exc), flush=True)
        dist.destroy_process_group()
        return 0
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step, length in enumerate((8, 8, 12, 12), start=1):
        model(torch.randint(0, T.VOCAB, (2, length))).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        session.after_step(step)
    monitor = session.monitor
    assert monitor is not None
    out = {
        "region": monitor.snapshot()["layers"],
        "compiles": [e for e in events.events if e["event"] in ("compile", "recompile", "engine_compile_mismatch")],
        "unclaimed": monitor.ledger.totals()["unclaimed"],
    }
    session.stop()
    print("SNAPSHOT " + json.dumps(out), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
