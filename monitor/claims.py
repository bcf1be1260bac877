"""Compiles the contract did not make: those no region claims (counted, logged, budgeted) and the first compile of
each instance of a region the engine compiles (its settings held against the contract's).

Runs only from Dynamo's end callback (never on a steady-state step); the monitor hands it the compile's evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contract.binding.targets import Binding, Target
from monitor import _dynamo
from monitor.actions import RecompileBudgetExceeded
from monitor.ledger import Ledger, Outcome
from monitor.reasons import brief, categorize, guard_site
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
        counted = self._ledger.unclaimed.record(name, recompile)
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
        }
        if recompile and frame is not None:
            reasons = _dynamo.reasons_of(frame)
            text = reasons[0] if reasons else ""
            fields.update(reason=categorize(text), guard=brief(text, 300), guard_site=guard_site(text))
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
        if not diff:
            return
        self._say(
            "error",
            "engine_compile_mismatch",
            region=target.region,
            module=target.path or "<root>",
            method=target.method,
            compile_id=cid,
            differences=diff,
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
