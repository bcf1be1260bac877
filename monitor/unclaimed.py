"""The ledger's part for compiles no region claims: counts per compiled code name (bounded), and their budget.

An engine's whole-model `torch.compile`, a compiled loss or sampler, a helper someone decorated: Dynamo compiles
them like any region, and a recompile storm there is as costly. Counting them by the qualified name of the code
Dynamo compiled keeps the metric's labels bounded by the code base, not by the inputs; past `MAX_CODES` names the
rest share one label.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

MAX_CODES = 32
"""Distinct `code` label values exported; later names count under `OTHER`."""
OTHER = "<other>"
"""The `code` label of compiles past `MAX_CODES` distinct names."""
LABEL = "<unclaimed>"
"""The `region` label (events, report) of compiles no region claims."""


class Counted(NamedTuple):
    """What one unclaimed compile changed."""

    code: str
    """The `code` label it counts under (its name, or `OTHER`)."""
    total: int
    """Unclaimed compiles of the process so far."""
    breach: bool
    """This compile is the first over `unclaimed_compile_budget`."""


class Unclaimed:
    """Unclaimed compiles and recompiles per code name, and the budget over their total."""

    def __init__(self, budget: int | None, on_breach: str = "alert") -> None:
        self.budget = budget
        """`[monitor] unclaimed_compile_budget` (None: no budget)."""
        self.on_breach = on_breach
        """`[monitor] unclaimed_on_breach`: `alert` or `fail`."""
        self._lock = threading.Lock()
        self._codes: dict[str, list[int]] = {}
        self._total = 0
        self._recompiles = 0
        self._seconds = 0.0
        self._breaks = 0
        self._reasons: dict[str, int] = {}
        self.breached = False
        """The budget was exceeded (once; the action ran then)."""

    def record(
        self, code: str, recompile: bool, *, seconds: float = 0.0, breaks: int = 0, reason: str | None = None
    ) -> Counted:
        """Count one compile of `code` (a recompile when Dynamo had compiled that frame before; `reason`: its guard's
        category), its seconds and graph breaks."""
        with self._lock:
            self._seconds += seconds
            self._breaks += breaks
            if recompile and reason:
                self._reasons[reason] = self._reasons.get(reason, 0) + 1
            label = code if code in self._codes or len(self._codes) < MAX_CODES else OTHER
            counts = self._codes.setdefault(label, [0, 0])
            counts[0] += 1
            counts[1] += int(recompile)
            self._total += 1
            self._recompiles += int(recompile)
            breach = self.budget is not None and self._total > self.budget and not self.breached
            self.breached = self.breached or breach
            return Counted(label, self._total, breach)

    def export(self) -> dict[str, Any]:
        """Plain data: per code (compiles, recompiles), totals, budget and whether it was exceeded."""
        with self._lock:
            return {
                "codes": {c: (n[0], n[1]) for c, n in self._codes.items()},
                "compiles": self._total,
                "recompiles": self._recompiles,
                "budget": self.budget,
                "breached": self.breached,
                "seconds": self._seconds,
                "graph_breaks": self._breaks,
                "by_reason": dict(self._reasons),
                "on_breach": self.on_breach,
            }
