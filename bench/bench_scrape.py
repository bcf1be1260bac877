"""Scrape time of the exporter with 200 regions (target < 10 ms): one full render of the registry per scrape.

Run: `python bench/bench_scrape.py [--regions 200 --scrapes 200]`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from torch import nn

import monitor
from contract.check import check


class Null:
    """Drops log events."""

    def __getattr__(self, name: str):
        return lambda *a, **k: None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--regions", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=200)
    args = parser.parse_args()
    model = nn.Module()
    model.blocks = nn.ModuleList(nn.Linear(2, 2) for _ in range(args.regions))
    body = "".join(f'[[region]]\nname = "r{i}"\nmodule = "blocks.{i}"\n' for i in range(args.regions))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text(f'[contract]\nname = "scrape"\n[defaults]\nbackend = "eager"\n{body}')
        _, binding, _ = check(path, model)
        registry = CollectorRegistry()
        with monitor.start(binding, registry=registry, logger=Null(), serve=False):
            generate_latest(registry)
            times, size = [], 0
            for _ in range(args.scrapes):
                t0 = time.perf_counter()
                size = len(generate_latest(registry))
                times.append(time.perf_counter() - t0)
    times.sort()
    print(f"command: python bench/bench_scrape.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"{args.regions} regions, {size} bytes per scrape: median {statistics.median(times) * 1e3:.2f} ms, "
          f"p95 {times[int(0.95 * len(times))] * 1e3:.2f} ms (target < 10 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
