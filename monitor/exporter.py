"""Prometheus export: a collector that reads the ledger at scrape time, per-rank serving, snapshot and push on exit."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, push_to_gateway, start_http_server, write_to_textfile
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from monitor.ledger import BUCKETS, CACHES, ERROR_KINDS, Ledger
from monitor.reasons import CATEGORIES

PREFIX = "torch_compile_"


def rank_info(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`target_info` labels: the torchrun rank identity (single-process defaults 0/0/1)."""
    env = os.environ if environ is None else environ
    return {"rank": env.get("RANK", "0"), "local_rank": env.get("LOCAL_RANK", "0"),
            "world_size": env.get("WORLD_SIZE", "1")}


class LedgerCollector(Collector):
    """Builds every metric family from one ledger snapshot per scrape: no second copy of the counts."""

    def __init__(self, ledger: Ledger, *, contract: str, sha256: str, before: Callable[[], None] | None = None,
                 on_error: Callable[[str, BaseException], None] | None = None) -> None:
        self._ledger, self._contract, self._sha = ledger, contract, sha256
        self._before, self._on_error = before, on_error

    def describe(self) -> Iterator[Metric]:
        """Names only (for the registry's duplicate check), without reading the ledger."""
        yield from _families({}, {"warm": False, "errors": {}}, "", "")

    def collect(self) -> Iterator[Metric]:
        """One consistent snapshot of the ledger, rendered as families; a failure is counted, not raised."""
        try:
            if self._before is not None:
                self._before()
            snap, totals = self._ledger.snapshot(), self._ledger.totals()
            families = list(_families(snap, totals, self._contract, self._sha))
        except Exception as exc:  # never break the scrape endpoint
            if self._on_error is not None:
                self._on_error("export", exc)
            return
        yield from families


def _families(snap: dict[str, dict[str, Any]], totals: dict[str, Any], contract: str, sha: str) -> Iterator[Metric]:
    yield from _counters(snap)
    yield _histogram(snap)
    yield from _gauges(snap)
    errors = CounterMetricFamily(PREFIX + "monitor_errors", "Internal errors of the monitor, by kind.", labels=["kind"])
    for kind in ERROR_KINDS:
        errors.add_metric([kind], totals["errors"].get(kind, 0))
    yield errors
    yield GaugeMetricFamily(PREFIX + "warm", "1 once the engine declared itself warm (mark_warm()).",
                            value=1 if totals["warm"] else 0)
    info = GaugeMetricFamily(PREFIX + "contract_info", "The contract this process enforces (always 1).",
                             labels=["contract", "contract_sha256"])
    if contract:
        info.add_metric([contract, sha], 1)
    yield info


def _counters(snap: dict[str, dict[str, Any]]) -> Iterator[Metric]:
    compiles = CounterMetricFamily(PREFIX + "compiles", "Dynamo compiles (first compiles and recompiles) of the "
                                   "region's frames.", labels=["region"])
    recompiles = CounterMetricFamily(PREFIX + "recompiles", "Recompiles of a region instance, by guard-failure "
                                     "category.", labels=["region", "reason"])
    breaks = CounterMetricFamily(PREFIX + "graph_breaks", "Graph breaks in the region's compiles.", labels=["region"])
    cache = CounterMetricFamily(PREFIX + "cache_lookups", "FX-graph and AOTAutograd cache lookups during the "
                                "region's compiles.", labels=["region", "cache", "result"])
    limits = CounterMetricFamily(PREFIX + "recompile_limit_hits", "Dynamo recompile_limit hits: the frame now runs "
                                 "eager for new inputs, silently.", labels=["region"])
    for region, s in snap.items():
        compiles.add_metric([region], s["compiles"])
        breaks.add_metric([region], s["graph_breaks"])
        limits.add_metric([region], s["recompile_limit_hits"])
        for reason in CATEGORIES:
            recompiles.add_metric([region, reason], s["recompiles_by_reason"].get(reason, 0))
        for c in CACHES:
            for result in ("hit", "miss"):
                cache.add_metric([region, c, result], s["cache"][c][result])
    yield from (compiles, recompiles, breaks, cache, limits)


def _histogram(snap: dict[str, dict[str, Any]]) -> Metric:
    hist = HistogramMetricFamily(PREFIX + "compile_seconds", "Duration of the region's compile events.",
                                 labels=["region"])
    for region, s in snap.items():
        running, buckets = 0, []
        for bound, n in zip(BUCKETS, s["compile_seconds_buckets"]):
            running += n
            buckets.append((floatToGoString(bound), running))
        buckets.append(("+Inf", s["compile_events"]))
        hist.add_metric([region], buckets, s["compile_seconds"])
    return hist


def _gauges(snap: dict[str, dict[str, Any]]) -> Iterator[Metric]:
    specs = (("recompile_budget", "Recompiles each region instance may make after warm-up.", "recompile_budget"),
             ("budget_recompiles", "Recompiles counted against the budget (after warm-up, max over instances).",
              "budget_recompiles"),
             ("graph_break_budget", "Graph breaks allowed per compile.", "graph_break_budget"),
             ("budget_exceeded", "1 when the region exceeded a budget.", "breached"),
             ("eager_fallback", "1 when the monitor switched the region to eager (on_breach = eager).",
              "eager_fallback"))
    for name, doc, key in specs:
        g = GaugeMetricFamily(PREFIX + name, doc, labels=["region"])
        for region, s in snap.items():
            g.add_metric([region], float(s[key]))
        yield g


@dataclass(frozen=True, kw_only=True)
class Server:
    """A running metrics endpoint."""

    httpd: Any
    """The prometheus_client HTTP server."""
    port: int
    """The bound port (the real one when 0 was asked)."""

    def close(self) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(registry: CollectorRegistry, *, addr: str, port: int, local_rank: int = 0,
          certfile: str | None = None, keyfile: str | None = None) -> Server:
    """Serve the registry on addr:port+LOCAL_RANK (0: ephemeral), HTTPS when a cert is given; OSError if taken."""
    bind = port + local_rank if port else 0
    httpd, _thread = start_http_server(bind, addr=addr, registry=registry, certfile=certfile, keyfile=keyfile)
    return Server(httpd=httpd, port=httpd.server_port)


def write_snapshot(registry: CollectorRegistry, path: str, rank: str) -> str:
    """Final textfile-collector snapshot (atomic write); `{rank}` in the path becomes the rank."""
    target = path.replace("{rank}", rank)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    write_to_textfile(target, registry)
    return target


def push(registry: CollectorRegistry, url: str, *, rank: str, timeout: float) -> None:
    """Push the final snapshot to a Pushgateway, grouped by rank, with a short timeout."""
    push_to_gateway(url, job="torch_compile_contract", registry=registry, grouping_key={"rank": rank},
                    timeout=timeout)
