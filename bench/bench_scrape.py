"""Scrape time of the exporter with 200 regions (target < 10 ms), and step time while being scraped (unchanged).

Run: `python bench/bench_scrape.py [--regions 200 --scrapes 200 --rounds 20 --steps 5000 --interval 0.25]`.

Scrape time, every figure from the same run and registry: `collect()` alone (the ledger read into prometheus_client
families), `generate_latest(registry)` (prometheus_client's text rendering of those families: what the textfile
snapshot and the Pushgateway use), `exposition()` (the same bytes, rendered from text built once at start: what the
metrics endpoint serves to Prometheus), and a full HTTP GET of the endpoint with Prometheus' Accept header and gzip.
Step time: a tiny compiled model's steps, in rounds interleaved with and without another process scraping the endpoint
over HTTP every `--interval` seconds (Prometheus scrapes every 15-60 s; 0.25 s is 60x more often than 15 s).
The first scrapes render every family; later ones reuse a family's text while its values are unchanged (the steady
state after warm-up), so the scrape-time figures are printed for both: a ledger that changes between every scrape
and one that does not.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import torch
from prometheus_client import CollectorRegistry, generate_latest
from torch import nn

import monitor
from compile_formats.reasons import CATEGORIES
from contract.pipeline import check

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_monitor_overhead import Null, build, time_steps

ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
"""The Accept header Prometheus 2.x sends."""


def timed(fn: Callable[[], object], n: int, between: Callable[[int], None] | None = None) -> list[float]:
    """Milliseconds per call, n calls after one warm-up call; `between(i)` runs untimed before each call."""
    fn()
    out = []
    for i in range(n):
        if between is not None:
            between(i)
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return sorted(out)


def change_every_region(mon: monitor.Monitor) -> Callable[[int], None]:
    """Before each scrape: one more compile, recompile reason, graph break and cache hit in every region."""
    ledger = mon.ledger

    def between(i: int) -> None:
        for region in ledger.region_names:
            ledger.record_compile(
                region, 1, f"0/{i}", 0.003 * (i % 50), (("bench.py:1", f"break {i}"),), {("fx_graph", "hit"): 1}
            )
            ledger.record_reason(region, CATEGORIES[i % len(CATEGORIES)], None)

    return between


def http_get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.read()


def scrape_times(mon: monitor.Monitor, url: str, n: int) -> dict[str, list[float]]:
    registry, collector, change = mon.registry, mon._collector, change_every_region(mon)
    return {
        "collect() (ledger -> families)": timed(lambda: list(collector.collect()), n),
        "generate_latest(registry) (prometheus_client render)": timed(lambda: generate_latest(registry), n),
        "exposition(registry), ledger unchanged (steady state)": timed(lambda: collector.exposition(registry), n),
        "exposition(registry), every region changed": timed(lambda: collector.exposition(registry), n, change),
        "HTTP GET /metrics (Prometheus Accept, gzip)": timed(lambda: http_get(url), n),
    }


SCRAPER = """
import sys, time, urllib.request
url, interval, active, stop = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
from pathlib import Path
done = 0
while not Path(stop).exists():
    if Path(active).exists():
        req = urllib.request.Request(url, headers={"Accept": sys.argv[5], "Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
        done += 1
        time.sleep(interval)
    else:
        time.sleep(0.005)
print(done)
"""
"""A scraper in its own process, like Prometheus: only the serving side runs in the monitored process."""


def step_while_scraped(url: str, args: argparse.Namespace, tmp: Path) -> tuple[float, float, int]:
    """Median step time (us) while another process scrapes the endpoint vs idle, rounds interleaved; scrapes done.

    Each round starts from a collected heap and the order alternates, as in bench_monitor_overhead.
    """
    model, binding = build(argparse.Namespace(model="tiny", backend="eager", device="cpu"), tmp)
    x = torch.randn(8, 16)
    active, stop = tmp / "scrape-active", tmp / "scrape-stop"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRAPER, url, str(args.interval), str(active), str(stop), ACCEPT],
        stdout=subprocess.PIPE,
        text=True,
    )
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        with torch.no_grad(), monitor.start(binding, registry=CollectorRegistry(), logger=Null(), serve=False):
            model(x)
            time_steps(model, x, args.steps, "cpu")
            for i in range(args.rounds):
                for scraped in (True, False) if i % 2 == 0 else (False, True):
                    active.touch() if scraped else active.unlink(missing_ok=True)
                    gc.collect()
                    times[scraped].append(time_steps(model, x, args.steps, "cpu"))
    finally:
        active.unlink(missing_ok=True)
        stop.touch()
        out, _ = proc.communicate(timeout=60)
    return statistics.median(times[True]) * 1e6, statistics.median(times[False]) * 1e6, int(out.strip() or 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--regions", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--interval", type=float, default=0.25)
    args = parser.parse_args()
    model = nn.Module()
    model.blocks = nn.ModuleList(nn.Linear(2, 2) for _ in range(args.regions))
    body = "".join(f'[[region]]\nname = "r{i}"\nmodule = "blocks.{i}"\n' for i in range(args.regions))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text(f'[contract]\nname = "scrape"\n[defaults]\nbackend = "eager"\n[monitor]\nport = 0\n{body}')
        _, binding, _ = check(path, model)
        with monitor.start(binding, logger=Null()) as mon:
            url = f"http://127.0.0.1:{mon.port}/metrics"
            size, series = len(generate_latest(mon.registry)), sum(len(m.samples) for m in mon._collector.collect())
            times = scrape_times(mon, url, args.scrapes)
            same = mon._collector.exposition(mon.registry) == generate_latest(mon.registry)  # after the changes
            us_on, us_off, scrapes = step_while_scraped(url, args, Path(tmp))
    print(f"command: python bench/bench_scrape.py {' '.join(sys.argv[1:])}".rstrip())
    print(
        f"{args.regions} regions, {series} series, {size} bytes per scrape; served text identical to "
        f"generate_latest: {same}"
    )
    for name, values in times.items():
        print(f"  {name:55s} median {statistics.median(values):7.2f} ms, p95 {values[int(0.95 * len(values))]:7.2f} ms")
    for case in ("ledger unchanged (steady state)", "every region changed"):
        served = statistics.median(times[f"exposition(registry), {case}"])
        verdict = "within" if served < 10 else "ABOVE"
        print(f"scrape served to Prometheus, {case}: median {served:.2f} ms, {verdict} the 10 ms target")
    print(
        f"step time while another process scrapes every {args.interval:g} s over HTTP ({scrapes} scrapes): "
        f"{us_on:.2f} us vs "
        f"{us_off:.2f} us idle, ratio {us_on / us_off:.4f} ({args.rounds} interleaved rounds of {args.steps} steps)"
    )
    per_scrape_ms = max(us_on - us_off, 0.0) * args.steps * args.rounds / max(scrapes, 1) / 1e3
    print(
        f"  the step loop loses about {per_scrape_ms:.2f} ms per scrape (the serving thread holds the GIL while it "
        f"renders and sends): at Prometheus' 15 s interval that is {100 * per_scrape_ms / 15e3:.3f} % of wall time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
