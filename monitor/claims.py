"""Compiles the contract did not make: those no region claims (counted, logged, budgeted) and the first compile of
each instance of a region the engine compiles (its settings held against the contract's).

Runs only from Dynamo's end callback (never on a steady-state step); the monitor hands it the compile's evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_formats.reasons import brief, categorize, guard_site
from contract.binding.targets import Binding, Target
from monitor import _dynamo
from monitor.actions import RecompileBudgetExceeded
from monitor.ledger import Ledger, Outcome
from monitor.unclaimed import LABEL

Say = Callable[..., None]
INSIDE_CACHE = 256
"""Module instances remembered with the regions they contain (an unclaimed compile's owner)."""


class Claims:
    """Unclaimed compiles and engine-compile verification for one monitor."""

    def __init__(
        self, binding: Binding, ledger: Ledger, say: Say, breach: Callable[[str, Outcome], None], *, fail: bool
    ) -> None:
        self._binding = binding
        self._ledger = ledger
        self._say = say
        self._region_breach = breach
        self._fail = fail
        self._verified: set[int] = set()
        self.lazy: list[Target] = [
            t
            for rb in binding.regions.values()
            if rb.region.enabled and rb.region.engine and rb.region.verify_at == "first_compile"
            for t in rb.targets
            if t.engine is None
        ]
        """Targets of lazily compiled engine regions not verified yet (their compile did not exist at start)."""
        self._inside: dict[int, tuple[Any, tuple[str, ...]]] = {}
        self.armed: RecompileBudgetExceeded | None = None
        """Set when the unclaimed budget was exceeded with `unclaimed_on_breach = "fail"`: the monitor's start callback
        raises it at the next compile its in-progress record finds unclaimed."""

    # -- compiles no region claims ------------------------------------------------------------------------------
    def unclaimed(self, compile_id: str, fn: Any, frame: Any, seconds: float, breaks: int) -> None:
        """Count one compile no region claims, say where it is, and act on its budget."""
        code = _dynamo.user_code(frame, fn)
        name = _code_name(code, fn)
        recompile = _dynamo.is_recompile(compile_id)
        why: dict[str, Any] = {}
        if recompile and frame is not None:
            reasons = _dynamo.reasons_of(frame)
            text = reasons[0] if reasons else ""
            why = {"reason": categorize(text), "guard": brief(text, 300), "guard_site": guard_site(text)}
        counted = self._ledger.unclaimed.record(
            name, recompile, seconds=seconds, breaks=breaks, reason=why.get("reason")
        )
        fields: dict[str, Any] = {
            "region": LABEL,
            "code": counted.code,
            "name": name,
            "site": _site(code),
            "compile_id": compile_id,
            "seconds": seconds,
            "recompile": recompile,
            "graph_breaks": breaks,
            "count": counted.total,
            **why,
        }
        regions = self._regions_inside(fn)
        if regions:
            fields["contains_regions"] = list(regions)
            fields["effect"] = "the compile traces these regions into its own graph: they never compile on their own"
        self._say("warning" if recompile or regions else "info", "unclaimed_compile", **fields)
        if counted.breach:
            self._breach(counted.total)

    def _breach(self, total: int) -> None:
        budget = self._ledger.unclaimed.budget or 0
        error = RecompileBudgetExceeded(LABEL, total, budget, (), "unclaimed_compile_budget")
        if self._fail:
            self.armed = error
        self._say(
            "error",
            "budget_exceeded",
            region=LABEL,
            budget_kind="unclaimed_compile_budget",
            count=total,
            budget=budget,
            action="fail" if self._fail else "alert",
            last_reasons=[],
        )

    def _regions_inside(self, fn: Any) -> tuple[str, ...]:
        """Regions with a target inside the module an unclaimed compile runs (cached per module instance)."""
        owner = _dynamo.owner_of(fn) if fn is not None else None
        if owner is None:
            return ()
        module = owner[0]
        hit = self._inside.get(id(module))
        if hit is not None and hit[0] is module:
            return hit[1]
        modules = getattr(module, "modules", None)
        ids = {id(m) for m in modules()} if callable(modules) else set()
        found = tuple(dict.fromkeys(t.region for t in self._binding.targets() if id(t.module) in ids))
        if len(self._inside) < INSIDE_CACHE:
            self._inside[id(module)] = (module, found)
        return found

    # -- regions the engine compiles: settings at each instance's first compile -----------------------------------
    def verify_engine(self, target: Target, cid: str, context: Any) -> None:
        """A region the engine compiles, at each instance's first compile: compiled with the contract's settings?
        A difference is logged and is a breach of the region (`engine_settings`)."""
        diff = self.verify(target, context)
        if diff:
            self._mismatch(target, cid, diff)

    def _mismatch(self, target: Target, cid: str, diff: str, *, served: int = 0) -> None:
        """An engine region instance compiled with other settings than the contract's: logged, a region breach;
        `served`: this many instances (the first named) run a graph compiled outside the contract with these."""
        self._say(
            "error",
            "engine_compile_mismatch",
            region=target.region,
            module=target.path or "<root>",
            method=target.method,
            compile_id=cid,
            differences=diff,
            served=bool(served),
            **({"instances": served} if served else {}),
        )
        out = self._ledger.record_breach(target.region, "engine_settings", diff)
        if out is not None:
            self._region_breach(target.region, out)

    def verify(self, target: Target, context: Any) -> str | None:
        """At an engine region instance's first compile: the differences between how it was compiled and the
        contract's settings ("" when none or unreadable); None when this instance was verified before."""
        if id(target) in self._verified:
            return None
        self._verified.add(id(target))
        from contract import _compiled

        if target.engine is None:  # a lazy engine: its compiles exist now, for this instance and its siblings
            self._locate(target.region)
        actual = _compiled.settings_of(context) if context is not None else None
        want = _compiled.expected_for(self._binding.regions[target.region].region)
        return "; ".join(want.differences(actual)) if actual is not None and want is not None else ""

    def _locate(self, region: str) -> None:
        """Find where the engine put its compiles for every target of a region still without one (siblings that
        share this instance's compiled code never compile themselves, yet an eager or fail action must reach
        them)."""
        from contract.binding.apply import engine_compiles

        found = engine_compiles(self._binding.model)
        for t in self._binding.regions[region].targets:
            if t.engine is None:
                t.engine = found.get((id(t.module), t.method))

    def verify_served(self) -> None:
        """Lazily compiled engine instances whose compile exists by now though no compile of theirs fired: Dynamo
        served their calls from a graph compiled earlier, so there was no compile to verify them at. Siblings of an
        instance that compiled share its verified code; in a region with no compile on record the graph was compiled
        for a model outside the contract: each instance's settings are read from the engine's compile (the adapter,
        `contract._compiled`) and the instances are marked served (`served_compile`)."""
        from contract.binding.apply import engine_compiles

        self.lazy = [t for t in self.lazy if id(t) not in self._verified]
        if not self.lazy:
            return
        found = engine_compiles(self._binding.model)
        by_region: dict[str, list[Target]] = {}
        for target in self.lazy:
            comp = target.engine or found.get((id(target.module), target.method))
            if comp is not None:
                target.engine = comp  # an eager or fail action must reach it
                self._verified.add(id(target))
                by_region.setdefault(target.region, []).append(target)
        self.lazy = [t for t in self.lazy if id(t) not in self._verified]
        for region, targets in by_region.items():
            if self._ledger.compiles_of(region) == 0:
                self._served(region, targets)

    def _served(self, region: str, targets: list[Target]) -> None:
        """Instances of one region running a graph compiled outside the contract: counted, said once, verified (one
        `engine_compile_mismatch` per distinct difference)."""
        from contract import _compiled

        for target in targets:
            self._ledger.record_served(region, id(target.module))
        first = targets[0]
        self._say(
            "warning",
            "served_compile",
            region=region,
            module=first.path or "<root>",
            method=first.method,
            instances=len(targets),
            effect="runs a graph Dynamo compiled earlier for a model outside the contract: no compile of its own "
            "fired (the region counts none); its settings were verified from the engine's compile",
        )
        want = _compiled.expected_for(self._binding.regions[region].region)
        differ: dict[str, list[Target]] = {}
        for target in targets:
            settings = target.engine.settings if target.engine is not None else None
            diff = "; ".join(want.differences(settings)) if want is not None and settings is not None else ""
            if diff:
                differ.setdefault(diff, []).append(target)
        for diff, same in differ.items():
            self._mismatch(same[0], "", diff, served=len(same))


def _code_name(code: Any, fn: Any) -> str:
    """The qualified name of the user's code Dynamo compiles (`Model.forward`), else of the compiled callable."""
    name = getattr(code, "co_qualname", None) or getattr(code, "co_name", None)
    if name:
        return str(name)
    owner = _dynamo.owner_of(fn) if fn is not None else None
    if owner is not None:
        return f"{type(owner[0]).__qualname__}.{owner[1]}"
    return str(getattr(fn, "__qualname__", "<unknown>"))


def _site(code: Any) -> str:
    """`file:line` where the compiled code starts."""
    file, line = getattr(code, "co_filename", None), getattr(code, "co_firstlineno", None)
    return f"{file}:{line}" if file and line else ""
