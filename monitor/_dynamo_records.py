"""The monitor's adapter for Dynamo's compilation-metrics records (private `torch._dynamo.utils`, verified on torch
2.11 to 2.15): frames Dynamo gave up on and recompile-limit refusals, which fire no callback of their own.

A sibling of `monitor/_dynamo.py` (the callbacks, the stack, graph breaks and counters), split from it at this seam.

Torch versions: read against 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (sources; a "graph break in loop" skip and a
recompile-limit refusal run on all five). Same in all five: the `_compilation_metrics` deque and
`get_compilation_metrics` / `set_compilation_metrics_limit`, the `CompilationMetrics` fields read here (`compile_id`,
`fail_type`, `fail_reason`, `fail_user_frame_filename` / `_lineno`, `is_forward`, `has_guarded_code`), the record
written after the end callback, the "Dynamo recompile limit exceeded" reason, `exc.Unsupported` / `UserError` and
`config.suppress_errors`. Nothing differs.
"""

from __future__ import annotations

import threading
from typing import Any

from monitor.capabilities import Capability

# -- frames Dynamo gave up on (they run eager, silently) ------------------------------------------------------------
# A frame Dynamo cannot compile at all (torch 2.11-2.15: any graph break inside a Python loop -> "graph break in loop";
# other `Unsupported` skips) fires the normal start/end callbacks but no graph-break counter increment; the only
# trace is `fail_type`/`fail_reason` on that compile's `CompilationMetrics` record. The end callback runs before the
# record exists (torch 2.11-2.15), so records are read lazily from `get_compilation_metrics()` (a bounded deque, not
# cleared by `reset()`), only those appended since the previous read, matched by the compile ids we attributed.
# Why not a handler on logger `torch._utils_internal`: it logs at INFO, so receiving it means lowering a torch
# logger's level, which makes torch's own handler print every record. Verified on torch 2.11-2.15.
_LIMIT_FAIL = "Dynamo recompile limit exceeded"
"""`fail_reason` prefix of a recompile-limit refusal (the record backs up the limit warning, which a silenced torch
logger never emits)."""
PENDING = 256
"""Compile ids awaiting their metrics record (oldest dropped first; the record follows within one compile)."""


class SkippedFrames:
    """Matches compiles we attributed with their metrics records; reports those Dynamo gave up on (ran eager)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, Any] = {}
        self._utils = _utils()
        records = self._records()
        self._last: Any = records[-1] if records else None

    def expect(self, compile_id: str, token: Any) -> None:
        """Remember an attributed compile; `token` comes back from `collect()` if its frame was skipped."""
        with self._lock:
            self._pending[compile_id] = token
            if len(self._pending) > PENDING:
                del self._pending[next(iter(self._pending))]

    def collect(self) -> tuple[list[tuple[Any, str, str, str]], list[tuple[str, str]]]:
        """Since the previous call: (token, fail_type, fail_reason, user `file:line` or "") of pending compiles whose
        frame now runs eager, and (compile_id, fail_reason) of recompile-limit refusals (they fire no callback, only
        this record)."""
        with self._lock:
            found: list[tuple[Any, str, str, str]] = []
            limits: list[tuple[str, str]] = []
            for rec in self._fresh_records():
                cid, reason = str(getattr(rec, "compile_id", "")), str(getattr(rec, "fail_reason", "") or "")
                if reason.startswith(_LIMIT_FAIL):
                    limits.append((cid, reason))
                    continue
                token = self._pending.pop(cid, None) if self._pending else None
                if token is not None and getattr(rec, "is_forward", True) is not False and _ran_eager(rec):
                    found.append((token, str(rec.fail_type), reason, _fail_site(rec)))
            return found, limits

    def forget(self) -> None:
        """After `torch._dynamo.reset()`: compile ids restart, pending ones can never be matched."""
        with self._lock:
            self._pending.clear()

    def _fresh_records(self) -> list[Any]:
        """Records appended since the previous call, oldest first (identity of the newest one marks the spot).

        Walks Dynamo's deque from its newest end instead of copying it: right after a compile the CPU caches are
        cold (Dynamo flushes them to time its guards), and touching all 64 records cost ~20 us there.
        """
        records = self._records()
        if not records or records[-1] is self._last:
            return []
        last, fresh = self._last, []
        try:
            for rec in reversed(records):
                if rec is last:
                    break
                fresh.append(rec)
        except RuntimeError:  # appended to by a compile in another thread meanwhile: read a copy
            return self._fresh_from(list(records))
        self._last = fresh[0]
        fresh.reverse()
        return fresh

    def _fresh_from(self, records: list[Any]) -> list[Any]:
        last, fresh = self._last, []
        for rec in reversed(records):
            if rec is last:
                break
            fresh.append(rec)
        self._last = records[-1] if records else last
        fresh.reverse()
        return fresh

    def _records(self) -> Any:
        """Dynamo's deque of compilation-metrics records itself (re-read: `set_compilation_metrics_limit` swaps it)."""
        try:
            records = getattr(self._utils, "_compilation_metrics", None)
            return records if records is not None else self._utils.get_compilation_metrics()
        except Exception:  # a renamed internal: nothing to report
            return ()


def _utils() -> Any:
    """`torch._dynamo.utils`, resolved once (an import statement on the hot path cost ~15 us with cold caches)."""
    try:
        from torch._dynamo import utils

        return utils
    except Exception:
        return None


def _fail_site(rec: Any) -> str:
    """`file:line` of the user frame a failed compile stopped in (`fail_user_frame_*`, torch 2.11-2.15), or ""."""
    file, line = getattr(rec, "fail_user_frame_filename", None), getattr(rec, "fail_user_frame_lineno", None)
    return f"{file}:{line}" if file and line else ""


def _ran_eager(rec: Any) -> bool:
    """Dynamo fell back to eager for this frame: a soft failure (Unsupported/UserError) or a suppressed error."""
    fail_type = getattr(rec, "fail_type", None)
    if not fail_type or getattr(rec, "has_guarded_code", False):
        return False
    if str(getattr(rec, "fail_reason", "") or "").startswith(_LIMIT_FAIL):
        return False
    try:
        import torch._dynamo.config as dynamo_config
        from torch._dynamo import exc

        soft = tuple(c for c in (getattr(exc, "Unsupported", None), getattr(exc, "UserError", None)) if c)
        cls = getattr(exc, str(fail_type).rsplit(".", 1)[-1], None)
        return (isinstance(cls, type) and issubclass(cls, soft)) or bool(getattr(dynamo_config, "suppress_errors", 0))
    except Exception:
        return fail_type in ("Unsupported", "UserError")


_CHAINED = "another graph break occurred"


def skip_reason(fail_reason: str) -> str:
    """First line of a skip's `fail_reason`, plus the first line of the break that made Dynamo skip the frame."""
    lines = [line.strip() for line in fail_reason[:20_000].splitlines()]
    head = next((line for line in lines if line), "")
    for i, line in enumerate(lines):
        if _CHAINED in line:
            cause = next((nxt for nxt in lines[i + 1 :] if nxt), "")
            return f"{head} -> {cause}" if cause else head
    return head


# -- capabilities: probed once when a monitor starts (see `monitor.capabilities`) ------------------------------------
RECORD_FIELDS = frozenset({"compile_id", "fail_type", "fail_reason"})
"""Fields of a compilation-metrics record `SkippedFrames` cannot do without."""


def probe() -> tuple[Capability, ...]:
    """Whether this torch keeps compilation-metrics records with the fields read above (looked up, never by version)."""
    utils = _utils()
    records = getattr(utils, "_compilation_metrics", None) is not None or callable(
        getattr(utils, "get_compilation_metrics", None)
    )
    record = getattr(utils, "CompilationMetrics", None)
    fields = set(getattr(record, "__dataclass_fields__", None) or getattr(record, "__annotations__", None) or ())
    return (
        Capability(
            name="compilation_metrics",
            available=records and RECORD_FIELDS <= fields,
            reads="torch._dynamo.utils.get_compilation_metrics() records (compile_id, fail_type, fail_reason)",
            effect="frames Dynamo gave up on (they run eager) are neither logged nor counted as graph breaks, and "
            "recompile-limit hits come only from Dynamo's warning (none while torch's logging is silenced)",
        ),
    )
