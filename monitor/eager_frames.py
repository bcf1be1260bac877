"""Frames that silently run eager: those Dynamo gave up on (a graph-break site of their region) and recompile-limit
hits, read from Dynamo's metrics records and its limit warning, each logged and charged to its region.

Split from the runtime so the monitor handle stays one screen of hooks; it runs only from Dynamo's callbacks, the
limit warning's handler and before a ledger read (never on a steady-state step).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from compile_formats.reasons import brief, guard_site, short
from contract.binding.targets import Target
from monitor import _dynamo, _dynamo_records
from monitor.ledger import Ledger, Outcome

LIMIT_IDS = 1024
"""Compile ids of recompile-limit hits already reported through Dynamo's warning (their metrics record is not
counted again)."""


class EagerFrames:
    """Skipped frames and recompile-limit hits of one monitor."""

    def __init__(
        self,
        ledger: Ledger,
        say: Callable[..., None],
        breach: Callable[[str, Outcome], None],
        attribute: Callable[[], Target | None],
    ) -> None:
        self._ledger, self._say, self._breach, self._attribute = ledger, say, breach, attribute
        self._skipped = _dynamo_records.SkippedFrames()
        self._limit_ids: set[str] = set()

    def expect(self, compile_id: str, token: Any) -> None:
        """Remember an attributed compile: its metrics record says later whether Dynamo gave up on the frame."""
        self._skipped.expect(compile_id, token)

    def check(self) -> None:
        """Read Dynamo's metrics records of past compiles: frames it gave up on (they run eager: a graph-break site
        of the region, logged, budgeted) and recompile-limit hits its silenced warning did not report."""
        skipped, limits = self._skipped.collect()
        for (target, cid, n_breaks), fail_type, fail_reason, site in skipped:
            why = _dynamo_records.skip_reason(fail_reason)
            out = self._ledger.record_skipped_frame(
                target.region, id(target.module), f"{cid.rpartition('/')[0]} {why[:200]}", n_breaks
            )
            self._say(
                "warning",
                "graph_break",
                region=target.region,
                module=target.path or "<root>",
                compile_id=cid,
                site=site,
                skipped_frame=True,
                fail_type=fail_type,
                reason=short(why, 200),
                sites=out.break_sites,
                effect="Dynamo skipped this frame: it runs eager",
            )
            if out.breach is not None:
                self._breach(target.region, out)
        for cid, fail_reason in limits:
            region = None if cid in self._limit_ids else self._ledger.region_of_frame(cid.rpartition("/")[0])
            if region is not None:
                self._limit_hit(region, cid, None, fail_reason, source="compilation_metrics")

    def on_limit_warning(self, record: logging.LogRecord) -> None:
        """Dynamo's recompile-limit warning, in the compiling thread: the stack names the region instance."""
        target = self._attribute()
        if target is not None:
            cid = _dynamo.compile_id_of(_dynamo.compile_frame())
            self._limit_hit(target.region, cid, target, _dynamo.limit_hit_reason(record) or "", source="warning")

    def _limit_hit(self, region: str, cid: str, target: Target | None, reason: str, *, source: str) -> None:
        if cid:
            if len(self._limit_ids) >= LIMIT_IDS:
                self._limit_ids.clear()
            self._limit_ids.add(cid)
        self._ledger.record_limit_hit(region, brief(reason, 300))
        where: dict[str, Any] = (
            {"module": target.path or "<root>", "method": target.method} if target is not None else {}
        )
        self._say(
            "error",
            "recompile_limit_hit",
            region=region,
            compile_id=cid,
            **where,
            last_reason=brief(reason, 300),
            site=guard_site(reason),
            source=source,
            effect="Dynamo runs this frame eager for new inputs from now on",
        )

    def on_reset(self) -> None:
        """After `torch._dynamo.reset()`: compile ids restart (records of earlier compiles were read first)."""
        self._skipped.forget()
        self._limit_ids.clear()
