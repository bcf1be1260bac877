"""Prometheus export: a collector that reads the ledger at scrape time, per-rank serving, snapshot and push on exit."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest, push_to_gateway, start_http_server, write_to_textfile
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, gzip_accepted
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from compile_formats.reasons import CATEGORIES
from monitor.capabilities import NAMES as CAPABILITIES
from monitor.ledger import BUCKETS, CACHES, COLUMNS, ERROR_KINDS, SOURCES, Ledger

PREFIX = "torch_compile_"


def rank_info(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`target_info` labels: the torchrun rank identity (single-process defaults 0/0/1)."""
    env = os.environ if environ is None else environ
    return {
        "rank": env.get("RANK", "0"),
        "local_rank": env.get("LOCAL_RANK", "0"),
        "world_size": env.get("WORLD_SIZE", "1"),
    }


_RESULTS = ("hit", "miss")
_LE = tuple(floatToGoString(b) for b in BUCKETS) + ("+Inf",)


@dataclass(frozen=True, kw_only=True)
class _Family:
    """One metric family with its series fixed at start (regions come only from the contract)."""

    name: str
    """Family name as prometheus_client takes it (`_total` is added for counters)."""
    doc: str
    """HELP text."""
    kind: str
    """counter, gauge or histogram."""
    series: tuple[tuple[str, dict[str, str]], ...]
    """(sample name, labels) of every sample, in exposition order."""
    values: Callable[[list[tuple], dict[str, Any]], list[float]]
    """Sample values from one ledger export, same order as `series`."""
    header: str
    """`# HELP` and `# TYPE` lines, rendered once."""
    prefixes: tuple[str, ...]
    """`name{labels} ` of every sample, rendered once."""


def _family(
    name: str,
    doc: str,
    kind: str,
    series: list[tuple[str, dict[str, str]]],
    values: Callable[[list[tuple], dict[str, Any]], list[float]],
) -> _Family:
    shown = name + "_total" if kind == "counter" else name
    header = f"# HELP {shown} {_escape_doc(doc)}\n# TYPE {shown} {kind}\n"
    prefixes = tuple(f"{n}{_labels(labels)} " for n, labels in series)
    return _Family(name=name, doc=doc, kind=kind, series=tuple(series), values=values, header=header, prefixes=prefixes)


Family = _Family
"""A metric family of fixed series (for collaborators that add families to the collector: `gauge`)."""


def gauge(
    name: str, doc: str, series: list[dict[str, str]], values: Callable[[list[tuple], dict[str, Any]], list[float]]
) -> Family:
    """A gauge family with one sample per label set, its values read when scraped (`values(rows, totals)`)."""
    return _family(name, doc, "gauge", [(name, labels) for labels in series], values)


def _escape_doc(doc: str) -> str:
    return doc.replace("\\", r"\\").replace("\n", r"\n")


def _labels(labels: dict[str, str]) -> str:
    """`{k="v",...}` exactly as the text format (and prometheus_client) writes it: sorted names, escaped values."""
    if not labels:
        return ""
    body = ",".join(f'{k}="{_escape_value(v)}"' for k, v in sorted(labels.items()))
    return "{" + body + "}"


def _escape_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _layout(regions: tuple[str, ...], contract: str, sha: str) -> tuple[_Family, ...]:
    """Every family the exporter emits, in order (the metrics table of docs/topics/monitor.md is generated from it)."""
    p = PREFIX
    per = [{"region": r} for r in regions]
    by_reason = [{"region": r, "reason": c} for r in regions for c in CATEGORIES]
    by_cache = [{"region": r, "cache": c, "result": res} for r in regions for c in CACHES for res in _RESULTS]
    hist: list[tuple[str, dict[str, str]]] = []
    for r in regions:
        hist += [(p + "compile_seconds_bucket", {"region": r, "le": le}) for le in _LE]
        hist += [(p + "compile_seconds_count", {"region": r}), (p + "compile_seconds_sum", {"region": r})]

    def col(column: str, name: str) -> tuple[list[tuple[str, dict[str, str]]], Callable]:
        i = COLUMNS[column].start
        return [(name, lab) for lab in per], lambda rows, _t: [row[i] for row in rows]

    def span(column: str) -> Callable:
        cut = COLUMNS[column]
        return lambda rows, _t: [v for row in rows for v in row[cut]]

    fams = [
        _family(
            p + "compiles",
            "Dynamo compiles (first compiles and recompiles) of the region's frames.",
            "counter",
            *col("compiles", p + "compiles_total"),
        ),
        _family(
            p + "recompiles",
            "Recompiles of a region instance, by guard-failure category.",
            "counter",
            [(p + "recompiles_total", lab) for lab in by_reason],
            span("recompiles_by_reason"),
        ),
        _family(
            p + "graph_breaks",
            "Graph breaks in the region's compiles.",
            "counter",
            *col("graph_breaks", p + "graph_breaks_total"),
        ),
        _family(
            p + "cache_lookups",
            "FX-graph and AOTAutograd cache lookups during the region's compiles.",
            "counter",
            [(p + "cache_lookups_total", lab) for lab in by_cache],
            span("cache"),
        ),
        _family(
            p + "recompile_limit_hits",
            "Dynamo recompile_limit hits: the frame now runs eager for new inputs, silently.",
            "counter",
            *col("limit_hits", p + "recompile_limit_hits_total"),
        ),
        _family(p + "compile_seconds", "Duration of the region's compile events.", "histogram", hist, _hist_values),
        _family(
            p + "ddp_graph_splits",
            "Graph splits DDPOptimizer made at gradient-bucket boundaries (not graph breaks, never budgeted).",
            "counter",
            *col("ddp_splits", p + "ddp_graph_splits_total"),
        ),
    ]
    for name, doc in _GAUGES:
        fams.append(_family(p + name, doc, "gauge", *col(name, p + name)))
    fams.append(
        _family(
            p + "cold_compiles",
            "Compiles that missed the Inductor cache although the warm manifest recorded them (a cold start).",
            "counter",
            *col("cold_compiles", p + "cold_compiles_total"),
        )
    )
    by_source = [{"region": r, "source": s} for r in regions for s in SOURCES]
    fams.append(
        _family(
            p + "first_compiles",
            "Region instances by where their first compile came from: precompile (a precompiled entry installed at "
            "torch.compile(), no Dynamo trace), artifacts (FX-graph/AOTAutograd cache hits) or cold.",
            "counter",
            [(p + "first_compiles_total", lab) for lab in by_source],
            span("first_compiles"),
        )
    )
    fams.append(
        _family(
            p + "first_compile_seconds",
            "Seconds of those first compiles, by source (precompile: reading and installing the entry).",
            "counter",
            [(p + "first_compile_seconds_total", lab) for lab in by_source],
            span("first_compile_seconds"),
        )
    )
    for name, doc in _WARM_GAUGES:
        fams.append(_family(p + name, doc, "gauge", *col(name, p + name)))
    fams.append(
        _family(
            p + "monitor_errors",
            "Internal errors of the monitor, by kind.",
            "counter",
            [(p + "monitor_errors_total", {"kind": k}) for k in ERROR_KINDS],
            lambda _rows, t: [t["errors"].get(k, 0) for k in ERROR_KINDS],
        )
    )
    fams.append(
        _family(
            p + "monitor_degraded",
            "1 when the monitor cannot read this capability from the installed torch (a renamed internal): what it "
            "feeds is not counted (the rank's monitor_degraded log event says what).",
            "gauge",
            [(p + "monitor_degraded", {"capability": c}) for c in CAPABILITIES],
            lambda _rows, t: [1 if c in t["degraded"] else 0 for c in CAPABILITIES],
        )
    )
    fams.append(
        _family(
            p + "warm",
            "1 once the engine declared itself warm (mark_warm()).",
            "gauge",
            [(p + "warm", {})],
            lambda _rows, t: [1 if t["warm"] else 0],
        )
    )
    info = [(p + "contract_info", {"contract": contract, "contract_sha256": sha})] if contract else []
    fams.append(
        _family(
            p + "contract_info",
            "The contract this process enforces (always 1).",
            "gauge",
            info,
            lambda _rows, _t: [1] * len(info),
        )
    )
    return tuple(fams)


_GAUGES = (
    ("recompile_budget", "Recompiles each region instance may make after warm-up."),
    ("budget_recompiles", "Recompiles counted against the budget (after warm-up, max over instances)."),
    ("graph_break_budget", "Distinct graph-break sites each region instance may have."),
    ("budget_graph_breaks", "Distinct graph-break sites counted against the budget (max over instances)."),
    ("budget_exceeded", "1 when the region exceeded a budget."),
    ("eager_fallback", "1 when the monitor switched the region to eager (on_breach = eager)."),
)
"""(ledger column = family name, HELP) of the per-region gauges."""
_WARM_GAUGES = (
    ("compile_seconds_budget", "Seconds one counted compile of a region instance may take (+Inf: no budget)."),
    ("budget_compile_seconds", "The region's longest compile counted against its compile_seconds_budget."),
)
"""The same, for the compile-time budget gauges."""


def _unclaimed(totals: dict[str, Any]) -> list[_Family]:
    """The families of compiles no region claims, built per scrape: their `code` labels appear as Dynamo compiles
    new code (bounded by `monitor.unclaimed.MAX_CODES`)."""
    p, u = PREFIX, totals["unclaimed"]
    codes = sorted(u["codes"].items())
    budget = float("inf") if u["budget"] is None else float(u["budget"])
    return [
        _family(
            p + "unclaimed_compiles",
            "Dynamo compiles no region claims (an engine's own compile, a compiled loss or sampler), by the "
            "qualified name of the code compiled.",
            "counter",
            [(p + "unclaimed_compiles_total", {"code": c}) for c, _ in codes],
            lambda _r, _t: [n[0] for _, n in codes],
        ),
        _family(
            p + "unclaimed_recompiles",
            "Recompiles among the unclaimed compiles (a frame Dynamo had compiled before), by code.",
            "counter",
            [(p + "unclaimed_recompiles_total", {"code": c}) for c, _ in codes],
            lambda _r, _t: [n[1] for _, n in codes],
        ),
        _family(
            p + "unclaimed_compile_budget",
            "Unclaimed compiles the process may make ([monitor] unclaimed_compile_budget; +Inf: no budget).",
            "gauge",
            [(p + "unclaimed_compile_budget", {})],
            lambda _r, _t: [budget],
        ),
        _family(
            p + "unclaimed_budget_exceeded",
            "1 when the unclaimed compiles exceeded their budget.",
            "gauge",
            [(p + "unclaimed_budget_exceeded", {})],
            lambda _r, _t: [1 if u["breached"] else 0],
        ),
    ]


def _hist_values(rows: list[tuple], _totals: dict[str, Any]) -> list[float]:
    """Cumulative buckets, +Inf, _count, _sum per region (prometheus_client's histogram sample order)."""
    out: list[float] = []
    buckets, events, seconds = COLUMNS["buckets"], COLUMNS["compile_events"].start, COLUMNS["compile_seconds"].start
    for row in rows:
        out += accumulate(row[buckets])
        out += (row[events], row[events], row[seconds])
    return out


class LedgerCollector(Collector):
    """Builds every metric family from one ledger read per scrape: no second copy of the counts.

    The series are fixed at start (regions come from the contract), so names, labels and their rendered text are
    built once; a scrape only reads the ledger's numbers. `collect()` feeds prometheus_client (text, OpenMetrics,
    textfile, Pushgateway); `exposition()` renders the same families straight to the text format, byte for byte
    what `generate_latest` writes, for the metrics endpoint.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        contract: str,
        sha256: str,
        before: Callable[[], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
        extra: tuple[Family, ...] = (),
    ) -> None:
        self._ledger, self._before, self._on_error = ledger, before, on_error
        self._layout = _layout(ledger.region_names, contract, sha256) + extra
        self._numbers: dict[float, str] = {}
        self._rendered: dict[str, tuple[list[float], str]] = {}

    def describe(self) -> Iterator[Metric]:
        """Names only (for the registry's duplicate check), without reading the ledger."""
        for fam in (*self._layout, *_unclaimed({"unclaimed": {"codes": {}, "budget": None, "breached": False}})):
            yield Metric(fam.name, fam.doc, fam.kind)

    def collect(self) -> Iterator[Metric]:
        """One consistent read of the ledger as families; a failure is counted, not raised."""
        try:
            rows, totals = self._read()
            families = []
            for fam in (*self._layout, *_unclaimed(totals)):
                metric = Metric(fam.name, fam.doc, fam.kind)
                metric.samples = [
                    Sample(n, labels, v) for (n, labels), v in zip(fam.series, fam.values(rows, totals), strict=True)
                ]
                families.append(metric)
        except Exception as exc:  # never break the scrape endpoint
            self._failed(exc)
            return
        yield from families

    def text(self) -> str:
        """This collector's families in the text format (what `generate_latest` writes for them); "" on failure."""
        try:
            rows, totals = self._read()
            fixed = [self._render(fam, fam.values(rows, totals)) for fam in self._layout]
            return "".join(fixed + [self._render_once(fam, fam.values(rows, totals)) for fam in _unclaimed(totals)])
        except Exception as exc:  # as collect(): the endpoint still answers, without our families
            self._failed(exc)
            return ""

    def exposition(self, registry: CollectorRegistry) -> bytes | None:
        """`generate_latest(registry)`, fast, when the registry holds only this collector (else None)."""
        collectors = getattr(registry, "_collector_to_names", None)  # prometheus_client internal; absent: no fast path
        if collectors is None or list(collectors) != [self]:
            return None
        info = registry.get_target_info()
        head = generate_latest(CollectorRegistry(target_info=info)) if info else b""
        return head + self.text().encode()

    def _render(self, fam: _Family, values: list[float]) -> str:
        """A family's text; reused as is while its values are unchanged (the steady state after warm-up)."""
        last = self._rendered.get(fam.name)
        if last is not None and last[0] == values:
            return last[1]
        text = fam.header + "".join(map(str.__add__, fam.prefixes, map(self._number, values)))
        self._rendered[fam.name] = (values, text)  # one tuple swap: concurrent scrapes see old or new, both whole
        return text

    def _render_once(self, fam: _Family, values: list[float]) -> str:
        """A family whose series change between scrapes: rendered anew each time."""
        return fam.header + "".join(map(str.__add__, fam.prefixes, map(self._number, values)))

    def _read(self) -> tuple[list[tuple], dict[str, Any]]:
        if self._before is not None:
            self._before()
        return self._ledger.export()

    def _number(self, value: float) -> str:
        """floatToGoString(value) + newline, memoised (most values repeat: 0, small counts, budgets)."""
        text = self._numbers.get(value)
        if text is None:
            if len(self._numbers) > 65536:
                self._numbers.clear()
            text = self._numbers[value] = floatToGoString(value) + "\n"
        return text

    def _failed(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error("export", exc)


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


def serve(
    registry: CollectorRegistry,
    *,
    addr: str,
    port: int,
    local_rank: int = 0,
    certfile: str | None = None,
    keyfile: str | None = None,
    collector: LedgerCollector | None = None,
) -> Server:
    """Serve the registry on addr:port+LOCAL_RANK (0: ephemeral), HTTPS when a cert is given; OSError if taken.

    With `collector`, plain-text scrapes of a registry holding only that collector get its pre-rendered
    exposition (same bytes as prometheus_client's); everything else is prometheus_client's own app.
    """
    bind = port + local_rank if port else 0
    httpd, _thread = start_http_server(bind, addr=addr, registry=registry, certfile=certfile, keyfile=keyfile)
    app = httpd.get_app()
    if collector is not None and app is not None:
        httpd.set_app(fast_app(registry, collector, app))
    return Server(httpd=httpd, port=httpd.server_port)


def fast_app(registry: CollectorRegistry, collector: LedgerCollector, standard: Callable) -> Callable:
    """WSGI app: a GET without query whose Accept allows text 0.0.4 gets `collector.exposition()`, else `standard`."""

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        if (
            environ.get("REQUEST_METHOD") == "GET"
            and environ.get("PATH_INFO") != "/favicon.ico"
            and not environ.get("QUERY_STRING")
            and _plain_text_ok(environ.get("HTTP_ACCEPT") or "")
        ):
            body = collector.exposition(registry)
            if body is not None:
                headers = [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)]
                if gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING") or ""):
                    body = gzip.compress(body, compresslevel=1)  # level 1: a 0.5 MB page in ~1 ms, not ~10
                    headers.append(("Content-Encoding", "gzip"))
                start_response("200 OK", headers)
                return [body]
        return standard(environ, start_response)

    return app


def _plain_text_ok(accept: str) -> bool:
    """Whether the client accepts text format 0.0.4 (no Accept, `*/*`, or `text/plain` without another version)."""
    if not accept.strip():
        return True
    for entry in accept.split(","):
        parts = [p.strip() for p in entry.split(";")]
        version = next((p.split("=", 1)[1] for p in parts[1:] if p.startswith("version=")), "0.0.4")
        if any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parts[1:]):
            continue
        if parts[0] in ("*/*", "text/*") or (parts[0] == "text/plain" and version == "0.0.4"):
            return True
    return False


class _Ranked(Collector):
    """A registry's families with a `rank` label on every sample: the snapshots of all ranks of a host end up in one
    node_exporter target, where series without it would collide."""

    def __init__(self, registry: CollectorRegistry, rank: str) -> None:
        self._registry, self._rank = registry, rank

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            ranked = Metric(family.name, family.documentation, family.type, family.unit)
            ranked.samples = [
                s if "rank" in s.labels else s._replace(labels={**s.labels, "rank": self._rank}) for s in family.samples
            ]
            yield ranked


def write_snapshot(registry: CollectorRegistry, path: str, rank: str) -> str:
    """Final textfile-collector snapshot (atomic write, every series labelled `rank`); `{rank}` in the path
    becomes the rank."""
    target = path.replace("{rank}", rank)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    ranked = CollectorRegistry(auto_describe=True)
    ranked.register(_Ranked(registry, rank))
    write_to_textfile(target, ranked)
    return target


def push(registry: CollectorRegistry, url: str, *, contract: str, rank: str, timeout: float) -> None:
    """Push the final snapshot to a Pushgateway with a short timeout, grouped by contract and rank (the Pushgateway
    adds both as labels, so ranks and jobs never overwrite each other)."""
    push_to_gateway(
        url,
        job="torch_compile_contract",
        registry=registry,
        grouping_key={"contract": contract, "rank": rank},
        timeout=timeout,
    )
