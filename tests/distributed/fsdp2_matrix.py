"""Every FSDP2 block kind in both orders, one job each, printing the region's compiles, graph breaks and breach as
the monitor counted them: the device-machine form of `test_wrappers.py -k fsdp2_blocks` (NCCL needs one GPU per rank).

    DIST_BACKEND=nccl python -m tests.distributed.fsdp2_matrix --world 2 --backend inductor sequential llama

`--on-breach alert` lets a breaching job finish and print its counts (to measure a tree that breaches).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from tests.distributed.launch import run_plain
from tests.distributed.test_wrappers import BLOCKS, contract_file

ORDERS = ("fsdp-compile-then-shard", "fsdp-shard-then-compile")


def one(tmp: Path, kind: str, order: str, args: argparse.Namespace) -> str:
    """One job's line: kind, order, exit codes, seconds, and the first rank's region counts."""
    env, module, extra = BLOCKS[kind]
    path = contract_file(tmp, module, extra)
    text = path.read_text().replace('backend = "eager"', f'backend = "{args.backend}"')
    path.write_text(text.replace('on_breach = "fail"', f'on_breach = "{args.on_breach}"'))
    backend = {"DIST_BACKEND": os.environ.get("DIST_BACKEND", "gloo")}
    runs = run_plain(
        ["-m", "tests.distributed.worker", order, str(path)],
        args.world,
        timeout=150,
        env_for=lambda r: {**env, **backend},
    )
    line = next((x for x in runs[0].stdout.splitlines() if x.startswith("SNAPSHOT ")), None)
    region = json.loads(line.split(" ", 1)[1])["regions"]["r"] if line else None
    got = {k: region[k] for k in ("compiles", "graph_breaks", "breached")} if region else runs[0].stderr[-600:]
    codes = [r.returncode for r in runs]
    return (
        f"{backend['DIST_BACKEND']} x{args.world} {args.backend} {kind} {order} rc={codes} {runs[0].seconds:.0f}s {got}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kinds", nargs="*", default=list(BLOCKS), help="block kinds (default: all)")
    parser.add_argument("--world", type=int, default=2, help="ranks (NCCL: at most one per GPU)")
    parser.add_argument("--backend", default="eager", help="the region's backend")
    parser.add_argument("--on-breach", default="fail", help="the region's on_breach")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds:
            for order in ORDERS:
                print(one(Path(tmp), kind, order, args), flush=True)


if __name__ == "__main__":
    main()
