"""Compiles in progress: which region instance compiles since when, seen while it runs (not only when it ends).

At a compile's start the monitor records who compiles (`compile_started`, written at once: a SIGKILL leaves it in the
event file); the in-progress gauges are computed from these records at scrape time only; a compile with a
`compile_seconds_budget` arms one deadline on a watchdog thread that sleeps while nothing is armed, so the budget is
judged while the compile runs; SIGTERM and interpreter exit say which compile they interrupted.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from threading import get_ident
from typing import Any

from contract.binding.targets import Binding, Target
from monitor import _dynamo, _inductor
from monitor.actions import RecompileBudgetExceeded, act
from monitor.exporter import PREFIX, Family, gauge
from monitor.ledger import Ledger
from monitor.unclaimed import LABEL as UNCLAIMED

EFFECTS = {
    "alert": "the compile is still running; nothing else is done",
    "eager": "the region switches to eager when this compile returns",
    "fail": "the region's next call after this compile returns raises RecompileBudgetExceeded",
    "already_taken": "the region's on_breach action was taken at its first breach",
}
"""`effect` of a `budget_exceeded` event fired while the compile runs, per action."""


@dataclass(slots=True)
class Running:
    """One compile in progress (the outermost compile of its thread: Dynamo reports no nested ones)."""

    region: str
    module: str
    method: str
    compile_id: str
    trigger: str
    started: float
    """Monotonic clock at the start (ages, the budget deadline)."""
    wall: float
    """Epoch seconds at the start (the start-time gauge, events)."""
    tid: int
    thread: str
    budget: float | None
    """The `compile_seconds_budget` this compile counts against (None: not judged)."""
    code: tuple[str, str, int] | None
    """(function, file, first line) of the frame Dynamo compiles; None for a lazy backward or CUDA-graph recording."""
    deferred: str = ""
    """`eager` or `fail` decided at the budget while the compile ran: carried out when it returns."""
    reported: bool = False
    """A `compile_interrupted` event was written for it (SIGTERM, exit)."""

    def fields(self) -> dict[str, Any]:
        """Event fields naming the compile: region instance, compile id, trigger, and the code it compiles."""
        out: dict[str, Any] = {
            "region": self.region,
            "module": self.module,
            "method": self.method,
            "compile_id": self.compile_id,
            "trigger": self.trigger,
        }
        if self.code is not None:
            out["code"], out["file"], out["line"] = self.code
        return out


class Watchdog:
    """Calls `on_due(key)` once a deadline passes, from one daemon thread started at the first `arm()`.

    While nothing is armed the thread waits on a condition without a timeout (no wake-up, no CPU): nothing per step.
    `arm` wakes it only when the new deadline is earlier than the one it sleeps until (once per compile that starts
    while it idles); `disarm` never wakes it (each wake-up is a GIL hand-over the compiling thread pays for): it wakes
    at the forgotten deadline, finds nothing due and goes back to waiting without a timeout.
    """

    def __init__(self, on_due: Callable[[int], None], clock: Callable[[], float]) -> None:
        self._on_due, self._clock = on_due, clock
        self._cond = threading.Condition(threading.Lock())
        self._due: dict[int, float] = {}
        self._thread: threading.Thread | None = None
        self._until: float | None = None
        """The deadline the thread sleeps until (None: it waits without a timeout, or has not started)."""
        self._closed = False
        self._pid = os.getpid()
        self.wakeups = 0
        """Times the thread woke up (tests: none while no compile runs)."""

    def arm(self, key: int, deadline: float) -> None:
        """Call `on_due(key)` after `deadline` (monotonic) unless disarmed first; never in a forked child."""
        with self._cond:
            if self._closed or os.getpid() != self._pid:
                return
            self._due[key] = deadline
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="torch-compile-monitor-watchdog", daemon=True)
                self._thread.start()
            elif self._until is None or deadline < self._until:
                self._cond.notify()

    def disarm(self, key: int) -> None:
        """Forget a deadline (its compile returned); the thread is not woken for it."""
        with self._cond:
            self._due.pop(key, None)

    @property
    def running(self) -> bool:
        """The watchdog thread exists (it was armed once and not closed)."""
        return self._thread is not None and self._thread.is_alive()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread (idempotent)."""
        with self._cond:
            self._closed = True
            self._due.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread() and os.getpid() == self._pid:
            thread.join(timeout)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                self.wakeups += 1
                key = self._next()
                if key is None:
                    continue
                self._cond.release()
                try:
                    self._on_due(key)
                finally:
                    self._cond.acquire()

    def _next(self) -> int | None:
        """Wait for the earliest deadline (forever while none is armed); its key once it passed, else None."""
        if not self._due:
            self._until = None
            self._cond.wait()
            return None
        key, deadline = min(self._due.items(), key=lambda item: item[1])
        left = deadline - self._clock()
        if left >= 0:
            self._until = deadline
            self._cond.wait(left + 0.005)
            return None
        del self._due[key]
        return key


class Inflight:
    """The compiles running now, per thread: `started`/`ended` from the monitor's Dynamo hooks, gauges at scrape."""

    def __init__(
        self,
        binding: Binding,
        ledger: Ledger,
        *,
        say: Callable[..., None],
        resolve: Callable[[Any], Target | None],
        counted_backward: Callable[[str, bool], bool],
        logs_info: Callable[[], bool],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._binding, self._ledger, self._say = binding, ledger, say
        self._resolve, self._counted_backward, self._logs_info = resolve, counted_backward, logs_info
        self._clock, self._wall = clock, wall
        self._lock = threading.Lock()
        self._running: dict[int, Running] = {}
        self._stack = _dynamo.DynamoStack()
        self.watchdog = Watchdog(self._overdue, clock)
        self.regions = (*ledger.region_names, UNCLAIMED)
        """Label values of the gauges: every contract region, then `<unclaimed>`."""

    # -- hooks (Dynamo's start/end callbacks, on the compiling thread) ----------------------------------------------
    def started(self, args: Any) -> None:
        """Record who compiles (region instance, compile id, code) and log `compile_started`; arm the budget."""
        run = self._identify(args)
        with self._lock:
            self._running[run.tid] = run
        if run.budget is not None:
            self.watchdog.arm(run.tid, run.started + run.budget)
        self._say(
            "info",
            "compile_started",
            log=self._logs_info(),
            **run.fields(),
            thread=run.thread,
            budget=run.budget,
        )

    def _identify(self, args: Any) -> Running:
        """The region instance compiling (found as the end hook finds it), or the owner of a lazy backward's id."""
        cid, trigger = _dynamo.compile_id(args), _dynamo.trigger_name(args)
        region, module, method, counted, code = UNCLAIMED, "", "", False, None
        if _dynamo.is_dynamo(args):
            fn = self._stack.compiled_callable()
            target = self._resolve(fn) if fn is not None else None
            code = _dynamo.compile_code(self._stack.compile_frame(), fn)
            if target is not None:
                region, module, method = target.region, target.path or "<root>", target.method
                counted = self._ledger.would_count(region, id(target.module), cid)
        else:
            owner = self._ledger.owner(cid)
            if owner is not None:
                region = owner[0]
                counted = trigger == "LAZY_BACKWARD" and self._counted_backward(cid, False)
        budget = self._binding.regions[region].region.compile_seconds_budget if counted else None
        thread = threading.current_thread()
        return Running(
            region, module, method, cid, trigger.lower(), self._clock(), self._wall(), get_ident(), thread.name,
            budget, code,
        )  # fmt: skip

    def ended(self) -> None:
        """The compile of this thread returned (or raised): forget it, say so where nothing else will, and carry out
        an `eager`/`fail` action its budget breach deferred."""
        with self._lock:
            run = self._running.pop(get_ident(), None)
        if run is None:
            return
        if run.budget is not None:
            self.watchdog.disarm(run.tid)
        seconds = self._clock() - run.started
        exc = sys.exc_info()[0]
        if exc is not None and not issubclass(exc, Exception) and not run.reported:
            self._interrupted(run, exc.__name__, seconds, where=False)
        if run.region == UNCLAIMED and run.trigger != "dynamo":  # an unclaimed backward: no event closes it
            self._say("info", "compile_finished", log=False, **run.fields(), seconds=seconds)
        if run.deferred:
            self._carry_out(run, seconds)

    def _carry_out(self, run: Running, seconds: float) -> None:
        """The `eager`/`fail` action a breach decided while the compile ran, now that it returned."""
        last = self._ledger.last_reasons(run.region)
        error = RecompileBudgetExceeded(
            run.region, round(seconds, 3), run.budget or 0.0, last, "compile_seconds_budget"
        )
        action = act(self._binding, run.region, run.deferred, error)
        self._ledger.set_action(run.region, eager=action == "eager", fail=action == "fail")

    # -- the watchdog thread ------------------------------------------------------------------------------------------
    def _overdue(self, tid: int) -> None:
        """A compile ran past its `compile_seconds_budget`: the breach fires now (metric, event); `eager`/`fail` are
        deferred to its return (switching a region's callables under a running trace is not safe)."""
        with self._lock:
            run = self._running.get(tid)
            if run is None or run.budget is None:
                return
            seconds = self._clock() - run.started
            out = self._ledger.record_compile_seconds(run.region, seconds)
            if out is None:
                return
            action = self._binding.regions[run.region].region.on_breach if out.first_breach else "already_taken"
            if action in ("eager", "fail"):
                run.deferred = action
        self._say(
            "error",
            "budget_exceeded",
            region=run.region,
            budget_kind="compile_seconds_budget",
            count=round(seconds, 3),
            budget=run.budget,
            action=action,
            last_reasons=list(self._ledger.last_reasons(run.region)[-3:]),
            in_progress=True,
            compile_id=run.compile_id,
            module=run.module,
            effect=EFFECTS.get(action, ""),
            **_inductor.compile_position(tid),
        )

    # -- SIGTERM, exit --------------------------------------------------------------------------------------------------
    def interrupted(self, by: str) -> None:
        """Write `compile_interrupted` for every compile still running (SIGTERM handler, interpreter exit)."""
        now = self._clock()
        with self._lock:
            runs = [r for r in self._running.values() if not r.reported]
        for run in runs:
            self._interrupted(run, by, now - run.started, where=True)

    def _interrupted(self, run: Running, by: str, seconds: float, *, where: bool) -> None:
        run.reported = True
        position = _inductor.compile_position(run.tid) if where else {}
        self._say(
            "warning",
            "compile_interrupted",
            **run.fields(),
            by=by,
            seconds=round(seconds, 3),
            started_ts=run.wall,
            thread=run.thread,
            **position,
        )

    def close(self) -> None:
        """Stop the watchdog thread (the records stay: a final export after this still shows them)."""
        self.watchdog.close()

    def region_now(self) -> str | None:
        """The region (or `<unclaimed>`) of the compile this thread runs, as `started` identified it; None if none."""
        with self._lock:
            run = self._running.get(get_ident())
        return run.region if run is not None else None

    # -- scrape time ------------------------------------------------------------------------------------------------------
    def running(self) -> list[Running]:
        """The compiles running now (a copy)."""
        with self._lock:
            return list(self._running.values())

    def ages(self) -> list[float]:
        """Per region (`regions` order): seconds since its oldest running compile started, 0 when none runs."""
        now, out = self._clock(), dict.fromkeys(self.regions, 0.0)
        for run in self.running():
            if run.region in out:
                out[run.region] = max(out[run.region], now - run.started)
        return list(out.values())

    def start_times(self) -> list[float]:
        """Per region: epoch start of its oldest running compile, 0 when none runs."""
        out = dict.fromkeys(self.regions, 0.0)
        for run in self.running():
            if run.region in out:
                out[run.region] = min(out[run.region] or run.wall, run.wall)
        return list(out.values())

    def families(self) -> tuple[Family, ...]:
        """The two in-progress gauges, read from the records when scraped (nothing is updated per step)."""
        series = [{"region": r} for r in self.regions]
        return (
            gauge(
                PREFIX + "compile_in_progress_seconds",
                "Seconds the region's oldest running compile has been running (0: none runs).",
                series,
                lambda _rows, _totals: self.ages(),
            ),
            gauge(
                PREFIX + "compile_in_progress_start_time_seconds",
                "Unix time the region's oldest running compile started (0: none runs).",
                series,
                lambda _rows, _totals: self.start_times(),
            ),
        )
