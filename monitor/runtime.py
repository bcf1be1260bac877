"""The monitor handle: Dynamo hooks -> attribution -> ledger -> logs, budget actions and metrics."""

from __future__ import annotations

import atexit
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from threading import get_ident
from typing import Any

from prometheus_client import CollectorRegistry

from compile_formats.reasons import break_summary, brief, categorize, generalizes, guard_site, names_instance
from contract.binding.targets import Binding, Target
from monitor import _dynamo, _dynamo_records, _inductor
from monitor.actions import RecompileBudgetExceeded, act
from monitor.capabilities import Capabilities
from monitor.claims import Claims
from monitor.coldstart import ColdStart
from monitor.eager_frames import EagerFrames
from monitor.event_catalog import known
from monitor.events import EventFile, cache_fields, open_events, report_hint, started_fields, summary_fields
from monitor.exporter import LedgerCollector, Server, rank_info
from monitor.first_compile import FirstCompiles
from monitor.inflight import Inflight
from monitor.ledger import Ledger, Outcome
from monitor.log import LOGGER_NAME, make_logger
from monitor.outputs import Outputs
from monitor.unclaimed import LABEL as UNCLAIMED

PRECOMPILED_MISS = "a guard of the precompiled entry failed (torch records no reason for a loaded entry's guards)"
"""The recompile text of an instance whose code came precompiled when Dynamo gives none (measured on 2.15)."""
TARGET_CACHE = 4096
"""Compiled callables remembered with their contract target (the attribution cache)."""
LIMIT_IDS = 1024
"""Compile ids remembered with whether their compile counts against `compile_seconds_budget`."""


class _LimitHandler(logging.Handler):
    """Receives Dynamo's recompile-limit warning in the compiling thread, where the stack names the instance."""

    def __init__(self, on_hit: Callable[[logging.LogRecord], None]) -> None:
        super().__init__(level=logging.WARNING)
        self._on_hit = on_hit

    def emit(self, record: logging.LogRecord) -> None:
        if _dynamo.is_limit_hit(record):
            self._on_hit(record)


class Monitor:
    """Runtime monitor of one bound model; use `monitor.start()` to build it."""

    def __init__(
        self,
        binding: Binding,
        *,
        registry: CollectorRegistry | None = None,
        logger: Any = None,
        clock: Callable[[], float] = time.perf_counter,
        serve: bool = True,
        manual_warmup: bool = False,
        environ: Mapping[str, str] | None = None,
        record_keys: bool = False,
        act: Callable[[Binding, str, str, RecompileBudgetExceeded], str] = act,
    ) -> None:
        self.binding = binding
        self._act = act
        """Carries out `on_breach` (`monitor.actions.act`; an engine adapter defers `fail` to its step boundary)."""
        spec = binding.contract.monitor
        self.capabilities = Capabilities(_dynamo.probe() + _dynamo_records.probe() + _inductor.probe())
        """What the installed torch lets the monitor read, probed once here; each lost one is degraded on its own."""
        self._hooked = "compile_events" in self.capabilities
        self._attributes = "region_attribution" in self.capabilities
        self.ledger = Ledger(
            (rb.region for rb in binding.regions.values()),
            manual_warmup=manual_warmup,
            unclaimed_budget=spec.unclaimed_compile_budget,
            degraded=(c.name for c in self.capabilities.lost),
            unclaimed_on_breach=spec.unclaimed_on_breach,
        )
        self.log = logger if logger is not None else make_logger(spec.log_format, environ=environ)
        self._info_on = logging.getLogger(LOGGER_NAME).isEnabledFor if logger is None else None
        """Level test of our own logger (an injected logger gets every event: its level is its business)."""
        self._stack = _dynamo.DynamoStack()
        self._targets: dict[int, tuple[Any, Target]] = {}
        self._clock = clock
        self._env = rank_info(environ)
        self._inflight: dict[int, float] = {}
        self._counters = _dynamo.counters()
        self._breaks = _dynamo.BreakLog(self._counters)
        self._cache_seen = _dynamo.cache_totals(self._counters)
        self._owner_pid = os.getpid()
        """The process that started the monitor: a forked child (DataLoader worker) never exports or serves."""
        self._errors_logged: set[str] = set()
        self._hook_faults: dict[int, BaseException | None] = {}
        self._start_faults: dict[int, BaseException] = {}
        """Per thread inside a hook: its first fault (a raising logger included), counted once when the hook ends."""
        self._stopped = False
        self._eager = EagerFrames(self.ledger, self._say, self._breach, self._attribute)
        """Frames that silently run eager: those Dynamo gave up on, and recompile-limit hits."""
        self._claims = Claims(
            binding,
            self.ledger,
            self._say,
            lambda region, out: self._breach(region, out),
            fail=spec.unclaimed_on_breach == "fail",
        )
        """Compiles no region claims, and the first compile of each instance of a region the engine compiles."""
        self._events: EventFile | None = None
        self._events = open_events(binding.contract, self._env, on_error=lambda exc: self._error("events", exc))
        self.cold = ColdStart(binding, say=self._say, on_cold=self.ledger.record_cold, record=record_keys)
        """Cache lookups per compile: `cold_compile` against the warm manifest; the recording `warm` writes."""
        self._first = FirstCompiles(
            binding, self.ledger, say=self._say, info=self._logs_info, preloaded=self.cold.preloaded
        )
        """Where each instance's first compile came from (precompile, artifacts, cold)."""
        self._seconds_counted: OrderedDict[str, bool] = OrderedDict()
        """Compile id -> whether its compile counts against `compile_seconds_budget` (for its lazy backward)."""
        self._running = Inflight(
            binding,
            self.ledger,
            say=self._say,
            resolve=self._target_of,
            counted_backward=self._seconds_counted.get,
            logs_info=lambda: self._info_on is None or self._info_on(logging.INFO),
        )
        """Compiles in progress (`compile_started`, the in-progress gauges, the budget judged while they run)."""
        self.registry = registry if registry is not None else CollectorRegistry(target_info=self._env)
        if not self.registry.get_target_info():
            self.registry.set_target_info(self._env)
        self._collector = LedgerCollector(
            self.ledger,
            contract=binding.contract.name,
            sha256=binding.contract.sha256,
            before=self._refresh,
            on_error=self._error,
            extra=self._running.families(),
        )
        self.registry.register(self._collector)
        self._limit = _LimitHandler(self._guard(self._eager.on_limit_warning))
        self._start_cb, self._end_cb = self._on_start, self._on_end  # each catches its own exceptions
        if self._hooked:
            _dynamo.register(self._start_cb, self._end_cb, self._guard(self._on_reset))
        _dynamo.limit_logger().addHandler(self._limit)
        self._outputs = Outputs(binding.contract, self.registry, self._env, say=self._say, on_error=self._error)
        self.server: Server | None = self._outputs.serve(self._collector, self.ledger) if serve else None
        atexit.register(self.stop)
        self._sigterm = self._outputs.install_sigterm(
            before=lambda: self._running.interrupted("SIGTERM"), events=self._events is not None
        )
        started = started_fields(binding, self.port, self._events)
        if self._events is not None:  # per-region settings go to the file only: one line per run, however many regions
            self._events.write("info", "monitor_started", started)
        started.pop("region_settings")
        self._say("info", "monitor_started", tee=False, **started)
        for cap in self.capabilities.lost:
            self._say(
                "warning",
                "monitor_degraded",
                capability=cap.name,
                reads=cap.reads,
                torch=started.get("torch"),
                effect=cap.effect,
            )
        if self.cold.manifest_error:
            self._say("warning", "warm_manifest_unreadable", error=self.cold.manifest_error)
        self._first.start()

    # -- public handle ---------------------------------------------------------------------------------------
    @property
    def port(self) -> int | None:
        """The bound metrics port, or None when not serving."""
        return self.server.port if self.server else None

    def mark_warm(self) -> None:
        """Warm-up is over: every later recompile counts against its region's budget."""
        self.ensure_hooks()
        self.ledger.mark_warm()
        self._say("info", "monitor_warm")

    def emit(self, level: str, event: str, **fields: Any) -> None:
        """Emit an event of the code driving the model (an engine adapter's stop) through the monitor's own sink: its
        log and its `[monitor] events_path` file, so the report sees it; never raises."""
        self._say(level, event, **fields)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Per region plain data with stable keys: compiles, recompiles, graph_breaks, breached, eager_fallback..."""
        self._refresh()
        return self.ledger.snapshot()

    def ensure_hooks(self) -> None:
        """Re-register callbacks something removed (a reset path that bypassed `clear()`)."""
        if not self._stopped and self._hooked and _dynamo.ensure(self._start_cb, self._end_cb):
            self._on_reset()
            self._say("warning", "monitor_hooks_reregistered")

    @property
    def verifying(self) -> bool:
        """Some instance of a lazily compiled engine region (`verify_at = "first_compile"`) is not verified yet."""
        return bool(self._claims.lazy)

    def verify_engine(self) -> None:
        """Verify lazily compiled engine instances whose compile exists by now, even if no compile of theirs fired
        (Dynamo served them a graph compiled for another model of the class); the adapters call it at each step
        boundary while `verifying`, every read of the ledger does too. Not while a compile runs (its end verifies)."""
        if self._claims.lazy and not self._inflight:
            self._run_hook(self._claims.verify_served)

    def _refresh(self) -> None:
        """Before any read of the ledger: hooks still registered, skipped frames of past compiles counted, lazily
        compiled engine instances verified."""
        self.ensure_hooks()
        self._run_hook(self._eager.check)
        self.verify_engine()

    def stop(self) -> None:
        """Unhook, write the final snapshot / push if configured, close the server (idempotent).

        In a forked child it only unhooks: the child's copy of the ledger is stale, and the server thread it would
        wait for does not exist there.
        """
        if self._stopped:
            return
        if os.getpid() != self._owner_pid:
            self._stopped = True
            if self._hooked:
                _dynamo.unregister(self._start_cb, self._end_cb)
            return
        self._run_hook(self._eager.check)
        self.verify_engine()
        self._stopped = True
        atexit.unregister(self.stop)
        if self._sigterm is not None:
            self._sigterm.uninstall()
        if self._hooked:
            _dynamo.unregister(self._start_cb, self._end_cb)
        _dynamo.limit_logger().removeHandler(self._limit)
        self.cold.stop()
        self._running.interrupted("stop")
        self._running.close()
        self._outputs.final()
        if self.server is not None:
            self.server.close()
        hint: dict[str, Any] = {"report": report_hint(self._events.template)} if self._events is not None else {}
        self._say("info", "monitor_stopped", summary=summary_fields(self.ledger.snapshot()), **hint)
        if self._events is not None:
            self._events.close()

    def unregister(self) -> None:
        """Take this monitor's metric families out of its registry (after `stop()`, its last values stay readable
        until then): a later monitor on the same registry, such as the next run of a reused adapter, registers its
        own; idempotent."""
        try:
            self.registry.unregister(self._collector)
        except KeyError:  # already taken out
            pass

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- Dynamo hooks (run only when Dynamo compiles; never on a cache hit) ----------------------------------
    def _guard(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Wrap a hook so an exception is counted and logged once, never raised into the user's step."""

        def hook(*args: Any) -> None:
            self._run_hook(fn, *args)

        return hook

    def _run_hook(self, fn: Callable[..., None], *args: Any, defer: bool = False) -> None:
        """Run hook code; its faults (an exception, any number of failed log lines) count as ONE hook error. With
        `defer` (the start hook) the fault is counted by this thread's next hook, the compile's end: one per compile."""
        tid = get_ident()
        outer = tid not in self._hook_faults
        if outer:
            self._hook_faults[tid] = self._start_faults.pop(tid, None)
        try:
            fn(*args)
        except Exception as exc:
            if self._hook_faults.get(tid) is None:
                self._hook_faults[tid] = exc
        finally:
            fault = self._hook_faults.pop(tid, None) if outer else None
            if fault is not None and defer:
                self._start_faults[tid] = fault
            elif fault is not None:
                self._error("hook", fault)

    def _say(self, level: str, event: str, *, log: bool = True, tee: bool = True, **fields: Any) -> None:
        """Emit one event to the log (unless `log=False`) and the event file (unless `tee=False`); never raises: a
        failing logger is a fault of the running hook, else of `export`. An event the catalog does not list at that
        level (`monitor.event_catalog`) is still emitted, and counted as a `monitor_error` of kind `event`."""
        if not known(event, level):
            self._error("event", ValueError(f"event {event!r} at level {level!r} is not in monitor.event_catalog"))
        if tee and self._events is not None:
            self._events.write(level, event, fields)
        if not log:
            return
        try:
            getattr(self.log, level)(event, **fields)
        except Exception as exc:
            tid = get_ident()
            if tid in self._hook_faults:
                if self._hook_faults[tid] is None:
                    self._hook_faults[tid] = exc
            else:
                self._error("export", exc)

    def _on_start(self, args: Any) -> None:
        """Start callback: the clock and the compile in progress (`compile_started`); once the unclaimed budget armed
        `fail`, an unclaimed compile raises here, in the thread that compiles."""
        try:
            self._inflight[get_ident()] = self._clock()
            self.cold.take()  # cache lookups outside a Dynamo compile (a standalone Inductor compile) are not its own
            self._run_hook(self._running.started, args, defer=True)
        except Exception as exc:
            self._error("hook", exc)
        if self._claims.armed is not None and self._running.region_now() == UNCLAIMED:
            raise self._claims.armed  # Dynamo re-raises it as InternalTorchDynamoError from None: see `breach_of`

    def _on_end(self, args: Any) -> None:
        """End callback (guarded: a fault is counted once, never raised into Dynamo)."""
        self._run_hook(self._end, args)

    def _end(self, args: Any) -> None:
        """Attribute, record in the ledger, then (recompiles only) read the reason; log; act."""
        self._running.ended()
        start = self._inflight.pop(get_ident(), None)
        seconds = self._clock() - start if start is not None else 0.0
        self._eager.check()  # the previous compile's metrics record exists by now
        if not _dynamo.is_dynamo(args):
            return self._on_aux(args, seconds)
        fn = self._stack.compiled_callable()
        target = self._target_of(fn) if fn is not None else None
        breaks, splits, cache = self._deltas()
        lookups = self.cold.take()
        cid = _dynamo.compile_id(args)
        if target is None and not self._attributes:
            return None  # no compile_wrapper to read: every compile would look unclaimed
        if target is None:
            return self._claims.unclaimed(cid, fn, self._stack.compile_frame(), seconds, len(breaks))
        out = self.ledger.record_compile(target.region, id(target.module), cid, seconds, breaks, cache, splits)
        if self.binding.regions[target.region].region.engine:
            self._claims.verify_engine(target, cid, self._stack.context)
        if not self.binding.regions[target.region].region.fullgraph:  # fullgraph raises: not a silent eager frame
            self._eager.expect(cid, (target, cid, len(breaks)))
        reason = category = None
        shared: dict[str, Any] = {}
        if out.recompile:
            frame = self._stack.compile_frame()
            reason, category = self._reason(target, _dynamo.reasons_of(frame) if frame is not None else [])
        elif _dynamo.is_recompile(cid):
            shared = self._shared_guard()
        self._after(target, cid, seconds, out, reason, category, breaks, cache, shared)
        self._warm_side(target, cid, seconds, out, lookups, cache)
        if splits:
            self._say(
                "info",
                "ddp_graph_split",
                region=target.region,
                module=target.path or "<root>",
                compile_id=cid,
                buckets=splits,
                effect="DDPOptimizer split the graph at gradient buckets: not a graph break",
            )

    def _logs_info(self) -> bool:
        """Whether an info event goes to the log too (the event file gets every event)."""
        return self._info_on is None or self._info_on(logging.INFO)

    def _on_aux(self, args: Any, seconds: float) -> None:
        """Lazy backward / CUDA-graph recording: charged (with its cache lookups) to the region that compiled that id."""
        _, _, cache = self._deltas()
        lookups = self.cold.take()
        cid = _dynamo.compile_id(args)
        owner = self.ledger.owner(cid)
        if owner is None:
            return
        trigger = _dynamo.trigger_name(args)
        self.ledger.record_aux(owner[0], trigger, seconds, cache)
        self._warm_aux(owner[0], cid, trigger, seconds, lookups)
        info = self._info_on is None or self._info_on(logging.INFO)
        if info or self._events is not None:
            fields: dict[str, Any] = {
                "region": owner[0],
                "compile_id": cid,
                "trigger": trigger.lower(),
                "seconds": seconds,
            }
            self._say("info", "aux_compile", log=info, **fields, **cache_fields(cache))

    def _warm_side(
        self, target: Target, cid: str, seconds: float, out: Outcome, lookups: list, cache: dict | None
    ) -> None:
        """This compile's source (`first_compile`), cache lookups (warm recording, `cold_compile`) and its
        compile-seconds budget."""
        said = self._first.on_compile(target, cid, seconds, cache)
        self.cold.on_compile(target, cid, seconds, lookups, explain=not said)
        counted = not out.recompile or out.counted
        if self.binding.regions[target.region].region.compile_seconds_budget is not None:
            self._seconds_counted[cid] = counted
            if len(self._seconds_counted) > LIMIT_IDS:
                self._seconds_counted.popitem(last=False)
        self._compile_seconds(target.region, seconds, counted)

    def _warm_aux(self, region: str, cid: str, trigger: str, seconds: float, lookups: list) -> None:
        """A lazy backward belongs to its forward's compile: same lookups record, same budget status."""
        self.cold.on_aux(cid, trigger, seconds, lookups)
        if trigger == "LAZY_BACKWARD":
            self._compile_seconds(region, seconds, self._seconds_counted.get(cid, False))

    def _compile_seconds(self, region: str, seconds: float, counted: bool) -> None:
        """`compile_seconds_budget`: one counted compile (first, or a recompile after warm-up) longer is a breach."""
        if not counted or self.binding.regions[region].region.compile_seconds_budget is None:
            return
        out = self.ledger.record_compile_seconds(region, seconds)
        if out is not None:
            self._breach(region, out, seconds=seconds)

    def _target_of(self, fn: Any) -> Target | None:
        """The contract target a compiled callable belongs to (cached per callable object, bounded)."""
        hit = self._targets.get(id(fn))
        if hit is not None and hit[0] is fn:
            return hit[1]
        owner = _dynamo.owner_of(fn)
        target = self.binding.region_of(*owner) if owner is not None else None
        if target is not None and len(self._targets) < TARGET_CACHE:
            self._targets[id(fn)] = (fn, target)
        return target

    def _deltas(self) -> tuple[tuple[tuple[str, str], ...], int, dict[tuple[str, str], int] | None]:
        """Graph breaks (site, reason), DDPOptimizer splits and cache lookups since the previous compile's end
        (Dynamo serializes compiles)."""
        breaks, splits = self._breaks.new()
        now_cache = _dynamo.cache_totals(self._counters)
        if now_cache == self._cache_seen:
            return breaks, splits, None
        cache = {k: n - b for k, n, b in zip(_dynamo.CACHE_KEYS, now_cache, self._cache_seen, strict=True) if n > b}
        self._cache_seen = now_cache
        return breaks, splits, cache

    def _attribute(self) -> Target | None:
        """The region instance whose compile_wrapper is on the stack (innermost); full walk, for rare paths."""
        fn = _dynamo.compiled_callable()
        return self._target_of(fn) if fn is not None else None

    def _shared_guard(self) -> dict[str, Any]:
        """`compile` fields of an instance's first compile of a frame Dynamo compiled before (for another instance):
        the guard that failed, preferring one that names the instance (`self.idx == 1`: one graph per instance, CC408)
        over one about an input (the first layer's input alone lacks grad: one more graph, shared)."""
        frame = self._stack.compile_frame()
        reasons = _dynamo.reasons_of(frame) if frame is not None else []
        text = next((r for r in reasons if names_instance(r)), reasons[0] if reasons else "")
        return {"guard": brief(text, 300), "guard_site": guard_site(text), "instance_guard": names_instance(text)}

    def _reason(self, target: Target, reasons: list[str]) -> tuple[str, str]:
        """Text and category of this instance's own guard failure (Dynamo lists every entry's)."""
        mine = (target.region, id(target.module))
        own = next((r for r in reasons if self.ledger.owner(_dynamo.reason_compile_id(r)) == mine), None)
        text = own or (reasons[0] if reasons else "")
        if not text and self.ledger.first_source(*mine) == "precompile":
            text = PRECOMPILED_MISS
        category = categorize(text)
        self.ledger.record_reason(target.region, category, brief(text, 300))
        return text, category

    def _after(
        self,
        target: Target,
        cid: str,
        seconds: float,
        out: Outcome,
        reason: str | None,
        category: str | None,
        breaks: tuple[tuple[str, str], ...],
        cache: dict | None,
        shared: dict[str, Any],
    ) -> None:
        """Log lines (the per-compile info line only when that level is on, or into the event file) and the breach
        action; `shared`: the guard of a frame Dynamo compiled before for another instance."""
        info = self._info_on is None or self._info_on(logging.INFO)
        if info or self._events is not None:
            self._say(
                "info",
                "compile",
                log=info,
                region=target.region,
                module=target.path or "<root>",
                method=target.method,
                compile_id=cid,
                seconds=seconds,
                recompile=out.recompile,
                **shared,
                **cache_fields(cache),
            )
        if out.recompile:
            self._say_recompile(target, cid, out, reason or "", category)
        for site, text in breaks:
            self._say(
                "warning",
                "graph_break",
                region=target.region,
                module=target.path or "<root>",
                compile_id=cid,
                site=site,
                reason=break_summary(text, 200),
                sites=out.break_sites,
                skipped_frame=False,
            )
        if out.breach is not None:
            self._breach(target.region, out)

    def _say_recompile(self, target: Target, cid: str, out: Outcome, reason: str, category: str | None) -> None:
        """The recompile event: the guard in one line, the user's file:line it names, and whether Dynamo answers it by
        making the value dynamic (a size under `dynamic = "auto"`, a float), which the probe tells apart (CC406)."""
        region = self.binding.regions[target.region].region
        self._say(
            "warning",
            "recompile",
            region=target.region,
            module=target.path or "<root>",
            compile_id=cid,
            reason=category,
            guard=brief(reason, 300),
            site=guard_site(reason),
            generalizing=generalizes(reason, region.dynamic),
            count=out.budget_recompiles,
            budget=region.recompile_budget,
            counted=out.counted,
        )

    def _breach(self, region: str, out: Outcome, *, seconds: float | None = None) -> None:
        """One error line per breach; the region's on_breach action runs once (fail only arms the next call)."""
        settings = self.binding.regions[region].region
        count: float
        budget: float
        if out.breach == "recompile_budget":
            count, budget = out.budget_recompiles, settings.recompile_budget
        elif out.breach == "compile_seconds_budget":
            count, budget = round(seconds or 0.0, 3), settings.compile_seconds_budget or 0.0
        elif out.breach == "engine_settings":
            count, budget = 1, 0
        else:
            count, budget = out.break_sites, settings.graph_break_budget
        last = self.ledger.last_reasons(region)
        error = RecompileBudgetExceeded(region, count, budget, last, out.breach or "")
        action = self._act(self.binding, region, settings.on_breach, error) if out.first_breach else "already_taken"
        self.ledger.set_action(region, eager=action == "eager", fail=action == "fail")
        self._say(
            "error",
            "budget_exceeded",
            region=region,
            budget_kind=out.breach,
            count=count,
            budget=budget,
            action=action,
            last_reasons=list(last[-3:]),
        )

    def _on_reset(self) -> None:
        self._eager.check()  # records of compiles before the reset are still there; their ids restart now
        self.cold.on_reset()
        self._eager.on_reset()
        self._inflight.clear()
        self._breaks.sync()
        self.ledger.on_reset()
        self._say("info", "dynamo_reset_seen")

    def _error(self, kind: str, exc: BaseException) -> None:
        """Count an internal error; log the first one of each kind."""
        self.ledger.error(kind)
        if kind not in self._errors_logged:
            self._errors_logged.add(kind)
            if self._events is not None and kind != "events":  # a failing event file must not recurse
                self._events.write("error", "monitor_error", {"kind": kind, "error": f"{type(exc).__name__}: {exc}"})
            try:
                self.log.error("monitor_error", kind=kind, error=f"{type(exc).__name__}: {exc}")
            except Exception:  # a broken logger must not break the step either
                pass
