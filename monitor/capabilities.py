"""What the monitor can read from the installed torch: one `Capability` per private reading of its adapters.

The adapters (`_dynamo`, `_dynamo_records`, `_inductor`) own every private access, and each owns the probe of its
readings: `probe()` looks the internals up once, when a monitor starts (feature detection: attributes, code objects,
dataclass fields; never a version string), and returns one record per reading. A reading a newer torch renamed is
lost alone: the monitor degrades that one (the rest keeps counting), logs one `monitor_degraded` event naming it and
exports `torch_compile_monitor_degraded{capability} 1`; nothing of it runs per step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

NAMES: tuple[str, ...] = (
    "compile_events",
    "reset_tracking",
    "region_attribution",
    "recompile_reasons",
    "graph_break_reasons",
    "dynamo_counters",
    "recompile_limit_warning",
    "compilation_metrics",
    "fx_graph_lookups",
    "aot_autograd_lookups",
)
"""Every capability the adapters probe, in export order (the `capability` label values of
`torch_compile_monitor_degraded`)."""


@dataclass(frozen=True, kw_only=True)
class Capability:
    """One private reading of an adapter, and whether this torch has it."""

    name: str
    """Stable name (one of `NAMES`): the metric label and the event's `capability` field."""
    available: bool
    """The probe found what the reading needs."""
    reads: str
    """The torch internal it reads, as a user can look it up."""
    effect: str
    """What the monitor does not count or say while it is lost."""


class Capabilities:
    """The probed capabilities of one monitor, by name (a name nobody probed counts as available)."""

    def __init__(self, found: Iterable[Capability]) -> None:
        self._by_name = {c.name: c for c in found}

    def __contains__(self, name: object) -> bool:
        """Whether the capability is available (`"graph_break_reasons" in caps`)."""
        cap = self._by_name.get(name) if isinstance(name, str) else None
        return cap is None or cap.available

    def __iter__(self) -> Iterator[Capability]:
        return iter(self._by_name.values())

    @property
    def lost(self) -> tuple[Capability, ...]:
        """The capabilities this torch does not have, in `NAMES` order."""
        return tuple(c for n in NAMES if (c := self._by_name.get(n)) is not None and not c.available)
