"""Where each region instance's first compile came from: a precompile hit, an artifacts (FX/AOT) hit, or cold.

A precompile hit happens before the monitor starts: `enforce`'s `torch.compile()` installed the bundle's entry
(`Target.precompile`, noted by apply), and the instance's first call then runs that code with no Dynamo compile at
all, so it is reported once at start, with the seconds the wrap took. Every other instance is reported at its first
Dynamo compile, from that compile's own cache lookups. An instance whose entry torch refused (a `bypass`: another
torch or GPU, a changed source file), could not read (`error`) or did not have (`miss`) while precompile was on is
also a `cold_compile` event with that reason. Nothing here runs on a step: only at start and in compile callbacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contract.binding.targets import Binding, Target
from monitor.ledger import Ledger

NO_REASON = {
    "miss": "the bundle has no precompiled entry for this function",
    "error": "torch could not read the precompiled entry",
    "bypass": "torch refused the precompiled entry",
}
"""The `reason` of a `cold_compile` whose precompile load torch gave no exception for."""


class FirstCompiles:
    """Reports each instance's first compile once (`first_compile` event, ledger, metric)."""

    def __init__(
        self,
        binding: Binding,
        ledger: Ledger,
        *,
        say: Callable[..., None],
        info: Callable[[], bool],
        preloaded: Callable[[Target], None],
    ) -> None:
        self._binding, self._ledger, self._say, self._info = binding, ledger, say, info
        self._preloaded = preloaded
        """Tells the cold-start explainer an instance's recorded compiles came precompiled."""
        self._loads: dict[tuple[str, int], Any] = {}
        """Instances whose precompile load did not hit (miss, bypass, error): said as cold at their first compile."""

    def start(self) -> None:
        """At monitor start: the instances apply installed a precompiled entry for (their first compile is done)."""
        for target in self._binding.targets():
            load = target.precompile
            if load is None:
                continue
            key = (target.region, id(target.module))
            if load.state != "hit":
                self._loads.setdefault(key, load)
            elif self._ledger.record_first(*key, "precompile", load.seconds, preloaded=True):
                self._preloaded(target)
                self._event(target, "precompile", load.seconds)

    def on_compile(self, target: Target, compile_id: str, seconds: float, cache: dict | None) -> bool:
        """A Dynamo compile of `target` (in the compile's end callback): the instance's first one is reported; True
        when it was also a `cold_compile` (a precompiled entry that did not load)."""
        source = "artifacts" if hit_caches(cache) else "cold"
        key = (target.region, id(target.module))
        if not self._ledger.record_first(*key, source, seconds):
            return False
        load = self._loads.pop(key, None)
        self._event(target, source, seconds, precompile=None if load is None else load.state)
        if load is None:
            return False
        self._ledger.record_cold(target.region)
        self._say(
            "warning",
            "cold_compile",
            **_where(target),
            compile_id=compile_id,
            trigger="DYNAMO",
            seconds=round(seconds, 3),
            cause=f"precompile_{load.state}",
            reason=load.reason or NO_REASON.get(load.state, load.state),
            source=source,
        )
        return True

    def _event(self, target: Target, source: str, seconds: float, precompile: str | None = None) -> None:
        """`first_compile` (`precompile`: the load state of an instance whose entry did not hit)."""
        extra = {} if precompile is None else {"precompile": precompile}
        self._say(
            "info",
            "first_compile",
            log=self._info(),
            **_where(target),
            source=source,
            seconds=round(seconds, 3),
            **extra,
        )


def _where(target: Target) -> dict[str, str]:
    return {
        "region": target.region,
        "module": target.path or "<root>",
        "method": target.method,
        "instance": f"{target.path or '<root>'}.{target.method}",
    }


def hit_caches(cache: dict[tuple[str, str], int] | None) -> bool:
    """A compile whose Inductor work came from the caches: it had lookups, no FX-graph miss, and no AOTAutograd miss
    unless FX-graph lookups then hit (an AOTAutograd miss whose graphs hit the FX-graph cache only re-traces)."""
    if not cache:
        return False
    n = {k: cache.get(k, 0) for k in (("fx_graph", "hit"), ("fx_graph", "miss"), ("aot_autograd", "hit"))}
    aot_miss = cache.get(("aot_autograd", "miss"), 0)
    if n[("fx_graph", "miss")]:
        return False
    return n[("fx_graph", "hit")] > 0 or (n[("aot_autograd", "hit")] > 0 and not aot_miss)
