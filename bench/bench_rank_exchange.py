"""What the ranks' startup verdict costs: bytes per rank and at the leader, the leader's decision time and the verdict
every rank reads, at 8, 1,024 and 16,384 ranks (simulated against one real TCPStore: every rank's writes are made,
the leader's reads and decision are the real code); and the exchange's wall time in real jobs of 2 and 4 ranks.

Run: .venv/bin/python bench/bench_rank_exchange.py [--ranks 8 1024 16384] [--jobs 2 4] [--repeats 3]
Scenarios: every rank identical (20 findings each), one rank differs (one extra finding and one config value), every
rank has its own cache dir (a per-rank CC203 finding; the dir declared in [distributed] per_rank).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import torch.distributed as dist

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contract.findings import Finding  # noqa: E402
from contract.report import exchange as ex  # noqa: E402
from tests.distributed.launch import run_plain  # noqa: E402


class Counting:
    """A store client that counts the bytes it sends and receives."""

    def __init__(self, store: dist.TCPStore) -> None:
        self.store, self.sent, self.received = store, 0, 0

    def set(self, key: str, value) -> None:
        self.sent += len(key) + len(value)
        self.store.set(key, value)

    def get(self, key: str) -> bytes:
        value = self.store.get(key)
        self.received += len(value)
        return value

    def multi_get(self, keys: list[str]) -> list[bytes]:
        values = self.store.multi_get(keys)
        self.received += sum(len(v) for v in values)
        return values

    def __getattr__(self, name: str):
        return getattr(self.store, name)


def findings_of(rank: int, scenario: str) -> list[Finding]:
    base = [
        Finding(
            code=f"CC3{i % 9 + 1:02d}",
            severity="warning",
            location=f"models/block.py:{40 + i}",
            message=f"Block.state_{i} (int) is assigned and read on the hot path of region 'layers': each new "
            "value is a recompile",
            fix="compute it as a local, set it once in __init__, or keep it in a buffer",
        )
        for i in range(20)
    ]
    if scenario == "one differs" and rank == 3:
        base.append(
            Finding(
                code="CC301",
                severity="error",
                location="models/router.py:62",
                message="Router.batches (int) is read and rewritten on the hot path",
                fix="use a buffer",
            )
        )
    if scenario == "per-rank cache dir":
        base.append(
            Finding(
                code="CC203",
                severity="error",
                location=f"/local/cache/rank{rank}",
                message="[cache] dir is not writable by uid 1000",
                fix="chown the dir",
            )
        )
    return base


def fingerprint_of(rank: int, scenario: str) -> dict[str, str]:
    fp = {
        "contract.sha256": "3f2a" * 16,
        "version.torch": "2.13.0",
        "version.python": "3.11.7",
        "region.layers": json.dumps({"module": "model.layers.*", "dynamic": "auto"}),
        "cache.dir": "/local/cache" + (f"/rank{rank}" if scenario == "per-rank cache dir" else ""),
    }
    if scenario == "one differs" and rank == 3:
        fp["config.inductor.max_autotune"] = "True"
    return fp


def simulate(world: int, scenario: str) -> dict[str, float]:
    server = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=60), wait_for_workers=False)
    writer = Counting(dist.TCPStore("127.0.0.1", server.port, 1, False, timeout=datetime.timedelta(seconds=60)))
    members = tuple(range(world))
    for r in members:  # what each rank writes
        channel = ex.Channel(store=writer, rank=r, members=members, namespace="tcc/bench/1", timeout_s=5)
        ex._publish(channel, findings_of(r, scenario), fingerprint_of(r, scenario))
    leader = Counting(dist.TCPStore("127.0.0.1", server.port, 1, False, timeout=datetime.timedelta(seconds=60)))
    channel = ex.Channel(store=leader, rank=0, members=members, namespace="tcc/bench/1", timeout_s=5)
    start = time.perf_counter()
    verdict = ex._decide(channel, ex._reported(channel), ["cache.dir"], lambda f: False)
    decided = time.perf_counter() - start
    return {
        "per_rank_bytes": writer.sent / world,
        "leader_read_bytes": leader.received,
        "decide_s": decided,
        "verdict_bytes": len(verdict),
        "verdict_findings": len(json.loads(verdict)["findings"]),
    }


def job_exchange(world: int) -> list[float]:
    """Wall seconds of `exchange()` itself on each rank of a real job (all ranks present, nothing to report)."""
    argv = ["-c", JOB_SCRIPT]
    runs = run_plain(argv, world, timeout=180)
    out = []
    for r in runs:
        line = next((x for x in r.stdout.splitlines() if x.startswith("EXCHANGE_S ")), None)
        if line is None:
            sys.exit(f"rank {r.rank} failed: {r.stderr[-800:]}")
        out.append(float(line.split()[1]))
    return out


def refusal_to_exit(world: int) -> float:
    """Seconds from the last rank finding its own error (before the exchange) to the last rank leaving, in a real job
    where only that rank has the error and every rank exits on the shared refusal (as `enforce` raising does)."""
    runs = run_plain(["-c", REFUSAL_SCRIPT], world, timeout=180)
    marks = {
        k: [float(x.split()[1]) for r in runs for x in r.stdout.splitlines() if x.startswith(k)] for k in ("F", "X")
    }
    if len(marks["F"]) != 1 or len(marks["X"]) != world:
        sys.exit(f"refusal job failed: {[r.stderr[-400:] for r in runs]}")
    return max(marks["X"]) - marks["F"][0]


REFUSAL_SCRIPT = """
import datetime, os, sys, time, torch.distributed as dist
from contract import _distributed
from contract.findings import Finding
from contract.report.exchange import exchange, open_channel
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank, members, name = _distributed.process_group()
dist.barrier()
own = []
if rank == len(members) - 1:
    own = [Finding(code="CC301", severity="error", location="m.py:3", message="counter", fix="buffer")]
    print("F", time.time(), flush=True)
hosts = rank == 0
verdict = exchange(open_channel(_distributed.rendezvous_store(), rank, members, "tcc/refuse", 30, hosts_store=hosts), own, {})
assert any(f.severity == "error" for f in verdict)
print("X", time.time(), flush=True)
os._exit(1)
"""


JOB_SCRIPT = """
import datetime, time, torch.distributed as dist
from contract import _distributed
from contract.report.exchange import exchange, open_channel
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank, members, name = _distributed.process_group()
dist.barrier()
start = time.perf_counter()
channel = open_channel(_distributed.rendezvous_store(), rank, members, "tcc/bench", 30)
verdict = exchange(channel, [], {"version.torch": "2.13.0"})
print("EXCHANGE_S", time.perf_counter() - start, flush=True)
dist.destroy_process_group()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 1024, 16384])
    parser.add_argument("--jobs", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'ranks':>6} {'scenario':<20} {'B/rank':>8} {'leader reads':>13} {'decide':>9} {'verdict':>9} findings")
    for world in args.ranks:
        for scenario in ("identical", "one differs", "per-rank cache dir"):
            m = simulate(world, scenario)
            print(
                f"{world:>6} {scenario:<20} {m['per_rank_bytes']:>8.0f} {m['leader_read_bytes'] / 1024:>10.1f} kB "
                f"{m['decide_s'] * 1000:>7.1f} ms {m['verdict_bytes'] / 1024:>6.1f} kB {m['verdict_findings']}"
            )
    for world in args.jobs:
        times = [t for _ in range(args.repeats) for t in job_exchange(world)]
        print(
            f"real job, {world} ranks (gloo, plain processes): exchange median {statistics.median(times) * 1000:.1f} "
            f"ms, max {max(times) * 1000:.1f} ms over {args.repeats} jobs"
        )
        waits = [refusal_to_exit(world) for _ in range(args.repeats)]
        print(
            f"real job, {world} ranks, one refuses: its refusal to the last rank's exit median "
            f"{statistics.median(waits) * 1000:.1f} ms, max {max(waits) * 1000:.1f} ms over {args.repeats} jobs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
