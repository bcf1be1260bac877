"""`trace.json` in the Chrome trace-event format (Perfetto, chrome://tracing): a process per rank, a track (thread)
per region, a complete event per compile with its reason and cache outcome, instant events for breaks and breaches,
and a begin event without an end for each compile that never ended (Perfetto shows it as "Did not end")."""

from __future__ import annotations

import json
from typing import Any

from monitor.report.model import Run

US = 1_000_000


def events(run: Run) -> list[dict[str, Any]]:
    """Every trace event: metadata (names, sort order), then spans and marks, timestamps in µs since the first event."""
    t0 = run.t0 or 0.0
    pids = {rank: i for i, rank in enumerate(run.rank_order)}
    tids = {name: i + 1 for i, name in enumerate(run.regions)}
    out: list[dict[str, Any]] = []
    for rank, pid in pids.items():
        out.append(_meta("process_name", pid, 0, {"name": f"rank {rank}"}))
        out.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
        for name, tid in tids.items():
            if rank in run.regions[name].cells:
                out.append(_meta("thread_name", pid, tid, {"name": name}))
                out.append(_meta("thread_sort_index", pid, tid, {"sort_index": tid}))
    for s in run.spans:
        args: dict[str, Any] = {"compile_id": s.compile_id, "cache": _cache(s.cache)}
        if s.module:
            args["module"] = s.module
        if s.category:
            args["reason"] = s.category
            args["guard"] = s.reason
        if s.cache:
            args.update(s.cache)
        if s.kind == "unfinished":
            out.append(_open(s, args, _us(s.start - t0), pids[s.rank], tids[s.region]))
            continue
        out.append(
            {
                "name": f"{s.kind} {s.region}",
                "cat": s.kind,
                "ph": "X",
                "ts": _us(s.start - t0),
                "dur": _us(s.end - s.start),
                "pid": pids[s.rank],
                "tid": tids[s.region],
                "args": args,
            }
        )
    for m in run.marks:
        out.append(
            {
                "name": m.kind,
                "cat": m.kind,
                "ph": "i",
                "s": "t",
                "ts": _us(m.ts - t0),
                "pid": pids[m.rank],
                "tid": tids[m.region],
                "args": {"text": m.text},
            }
        )
    return out


def render(run: Run) -> str:
    """The JSON object form (`traceEvents` plus the run's epoch start in `otherData`)."""
    doc = {
        "traceEvents": events(run),
        "displayTimeUnit": "ms",
        "otherData": {"t0_epoch_s": run.t0, "source": "compile-contract report"},
    }
    return json.dumps(doc, separators=(",", ":"))


def _open(s: Any, args: dict[str, Any], ts: int, pid: int, tid: int) -> dict[str, Any]:
    """A begin event with no matching end: the compile was still running when the inputs end."""
    name = f"unfinished {s.region}"
    return {
        "name": name,
        "cat": "unfinished",
        "ph": "B",
        "ts": ts,
        "pid": pid,
        "tid": tid,
        "args": {**args, "note": s.note},
    }


def _meta(name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": args}


def _us(seconds: float) -> int:
    """Whole microseconds (the format's unit; ints keep a 100,000-event trace small and fast to write)."""
    return int(seconds * US)


def _cache(cache: dict[str, int]) -> str:
    """`hit`, `miss`, `mixed` or `none` (no Inductor cache lookup: eager backends, or the cache is off)."""
    hit = cache.get("fx_graph_hit", 0) + cache.get("aot_autograd_hit", 0)
    miss = cache.get("fx_graph_miss", 0) + cache.get("aot_autograd_miss", 0)
    return "mixed" if hit and miss else "hit" if hit else "miss" if miss else "none"
