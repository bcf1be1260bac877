"""Every event the monitor emits, one record each: its name, level, fields and when it fires.

The monitor sends each event through one chokepoint (`Monitor._say`) to every sink: its logger (and any recorder a
caller passed as the logger), and the `[monitor] events_path` file. That chokepoint checks the name and level against
this catalog (an event missing here is a `monitor_error` of kind `event`, never an exception), `compile-contract
report` reads exactly these names (`monitor.report.read`), and docs/topics/monitor.md's events table is generated
from it. An engine adapter's events (`training_stopped`, `generate_fail_armed`) go through `Monitor.emit`, the same
chokepoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class EventSpec:
    """One event: what a log line or an event-file line with this `event` name holds."""

    name: str
    """The `event` key of the line (snake_case)."""
    level: str
    """Its level as documented (`info`, or `info (warning for a recompile...)` where it varies)."""
    fields: str
    """Its fields beyond the envelope (`v`, `ts`, `event`, `level`, the rank keys, `pid`), as documented."""
    when: str
    """When it fires."""
    region: bool = False
    """It belongs to a region: the report skips a line of it without `region`."""

    @property
    def levels(self) -> frozenset[str]:
        """The levels it may be emitted at (every level word of `level`)."""
        return frozenset(w for w in re.findall(r"[a-z]+", self.level) if w in LEVELS)


def _e(name: str, level: str, fields: str, when: str, region: bool = False) -> EventSpec:
    return EventSpec(name, level, fields, when, region)


CATALOG: dict[str, EventSpec] = {
    e.name: e
    for e in (
        _e(
            "monitor_started",
            "info",
            "contract, contract_sha256, contract_path, torch, python, hostname, platform (in the event file also each region's budgets and `on_breach`)",
            "`monitor.start()`",
        ),
        _e(
            "compile",
            "info",
            "region, module, method, compile_id, seconds, cache hits/misses; on an instance's first compile of a frame Dynamo compiled before for another instance: guard, guard_site, instance_guard (the guard names the instance: one graph per instance)",
            "every compile of a region's frame",
            True,
        ),
        _e(
            "recompile",
            "warning",
            "reason category, guard text on one line, `site` (the user `file:line` the guard names), `generalizing` (Dynamo answers it by making the value dynamic), count, budget, counted",
            "a compile of a frame the instance compiled before",
            True,
        ),
        _e(
            "graph_break",
            "warning",
            "module, site, one-line reason with Dynamo's explanation, sites, skipped_frame",
            "a graph break, or a frame Dynamo gave up on",
            True,
        ),
        _e(
            "ddp_graph_split",
            "info",
            "region, module, compile_id, buckets",
            "DDPOptimizer split the graph at gradient buckets (not a graph break)",
        ),
        _e(
            "aux_compile",
            "info",
            "region, compile_id, trigger (`lazy_backward` or `cudagraph_recording`), seconds, cache lookups",
            "a lazily compiled backward or a CUDA-graph recording",
            True,
        ),
        _e(
            "budget_exceeded",
            "error",
            "budget_kind (`recompile_budget`, `graph_break_budget`, `compile_seconds_budget`, `engine_settings`, `unclaimed_compile_budget` with region `<unclaimed>`), count, budget, action, last_reasons; `in_progress`, compile_id, at, phase, waiting_on when `compile_seconds_budget` ran out while the compile runs",
            "a region breached a budget",
            True,
        ),
        _e(
            "recompile_limit_hit",
            "error",
            "source (`warning` or `compilation_metrics`), last_reason, site",
            "Dynamo's `recompile_limit` was hit: the frame runs eager",
            True,
        ),
        _e(
            "unclaimed_compile",
            "info (warning for a recompile, or when it traces regions into its graph)",
            "region `<unclaimed>`, code (the metric label), name (the compiled code's qualified name), site (`file:line` where it starts), compile_id, seconds, recompile, graph_breaks, count; for a recompile reason, guard, guard_site; contains_regions and effect when the compile's module holds regions",
            "a Dynamo compile no region claims ([engines that compile themselves](engines.md))",
            True,
        ),
        _e(
            "engine_compile_mismatch",
            "error",
            "region, module, method, compile_id, differences (`fullgraph True (contract) vs False (engine)`), served",
            "the first compile of an instance of a `compiled_by = \"engine\"` region used other settings than the contract's (a breach handled by `on_breach`); `served`: no compile fired, the settings were read from the engine's compile (see `served_compile`)",
            True,
        ),
        _e(
            "served_compile",
            "warning",
            "region, module, method, effect",
            'an instance of a lazily compiled engine region (`verify_at = "first_compile"`) runs a graph Dynamo compiled earlier for a model outside the contract: no compile of its own fired, so it is verified from the engine\'s compile and counted in `served_instances`',
            True,
        ),
        _e(
            "compile_started",
            "info",
            "region (or `<unclaimed>`), module, method, compile_id, trigger, code, file, line, thread, budget",
            "every compile's start, written at once (a SIGKILLed rank's file names the compile it died in) ([compile stalls](compile-stalls.md))",
            True,
        ),
        _e(
            "compile_interrupted",
            "warning",
            "the running compile's fields, by (`SIGTERM`, `stop`, `SystemExit`), seconds, at, phase",
            "the process stopped while a compile ran",
            True,
        ),
        _e(
            "compile_finished",
            "info (event file only)",
            "the compile's fields, seconds",
            "the end of an unclaimed lazy backward (no other event closes it)",
            True,
        ),
        _e(
            "cold_compile",
            "warning",
            "region, module, method, instance, compile_id, trigger, seconds, recorded_seconds, misses, cause, changed, cache_dir; for a precompiled entry that did not load: cause (`precompile_bypass`, `precompile_error`, `precompile_miss`), reason (torch's), source",
            "a compile the warm manifest recorded missed the cache, or an instance's precompiled entry did not load",
            True,
        ),
        _e(
            "first_compile",
            "info",
            "region, module, method, instance, source (`precompile`, `artifacts`, `cold`), seconds; precompile (the load's state) when an entry did not load",
            "once per region instance: at `monitor.start()` for a precompile hit, else at its first Dynamo compile",
            True,
        ),
        _e(
            "warm_manifest_unreadable",
            "warning",
            "error",
            "`[cache] manifest` cannot be read",
        ),
        _e(
            "monitor_error",
            "error",
            "kind, error",
            "an internal error of the monitor (once per kind)",
        ),
        _e(
            "monitor_degraded",
            "warning",
            "capability, reads (the torch internal it could not find), torch, effect (what is not counted now)",
            "`monitor.start()`, once per capability the installed torch lacks ([below](#an-untested-torch-degraded-readings))",
        ),
        _e(
            "metrics_port_unavailable",
            "error",
            "addr, port, error",
            "the metrics port is taken (training goes on)",
        ),
        _e(
            "dynamo_reset_seen",
            "info",
            "",
            "`torch._dynamo.reset()` was called (the monitor survives it)",
        ),
        _e(
            "monitor_hooks_reregistered",
            "warning",
            "",
            "something removed the monitor's Dynamo callbacks (a reset path that bypassed `clear()`); they are registered again",
        ),
        _e(
            "monitor_warm",
            "info",
            "",
            "the engine called `mark_warm()`",
        ),
        _e(
            "metrics_snapshot_written",
            "info",
            "path",
            "`[monitor] snapshot_path` written on exit",
        ),
        _e(
            "monitor_stopped",
            "info",
            "summary (per region, and `<unclaimed>` once a compile outside every region happened: `compiles=4 recompiles=3 graph_breaks=0`), report (with an events file: the command that renders it)",
            "`stop()` or exit",
        ),
        _e(
            "training_stopped",
            "error",
            "`engine` (`lightning`, `hf_trainer`), `step`, `regions` (this rank's breached `fail` regions; empty on a rank that stops because another one breached), `effect`",
            "a `fail` breach stopped the run at a step boundary",
        ),
        _e(
            "generate_fail_armed",
            "error",
            "`engine` (`hf_generate`), `step` (calls so far), `regions`, `effect`",
            "a `fail` breach during a `generate()` call: the next call raises",
        ),
    )
}
"""Every event, in the order docs/topics/monitor.md lists them (the engine adapters' two last)."""
STOP_EVENTS: tuple[str, ...] = ("training_stopped", "generate_fail_armed")
"""Events an engine adapter emits when it acts on a `fail` breach at its step boundary (docs/topics/engines.md)."""


def known(event: str, level: str) -> bool:
    """Whether an event of this name may be emitted at this level."""
    spec = CATALOG.get(event)
    return spec is not None and level in spec.levels
