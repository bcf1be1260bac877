"""The records of one static scan: what it found (Hazard), what it parsed (Source), the writes it saw (Write) and the
state it collects across regions and instances (ScanState)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
"""The AST of a function the scan walks (a lambda's body is one expression)."""
MISSING = object()
"""A value the scan could not (or must not) read: unresolved names, unset slots."""
MAX_VISITS = 20_000
"""Bound on (function, instance) visits per scan: a generated model cannot make the scan run away."""


@dataclass(frozen=True, kw_only=True)
class Hazard:
    """One raw observation, turned into a Finding by `contract.checks.hotpath.check`."""

    kind: str
    """`counter`, `assigned`, `container`, `float`, `graph-break`, `item-branch`, `env`, `dynamic-getattr`,
    `batchnorm`, `per-instance`; `custom-op` (a custom operator without a fake implementation, turned into CC601 by
    `contract.checks.custom_ops`)."""
    where: str
    """`file:line` (or a module path for instance-level hazards)."""
    region: str
    """Region whose hot path reaches it."""
    what: str
    """Short description of the state or call, e.g. `HazardRouter.batches (int)`."""
    certain: bool = True
    """False when a name could not be resolved to a value, or when the code is dormant (the finding is a warning)."""
    guard: str = ""
    """For dormant code: the Python state that keeps it from running compiled now, e.g. `self.training (now False)`."""
    note: str = ""
    """How the installed torch differs from the rule's description, where it was measured to."""
    guard_keys: frozenset[tuple[int, str]] = frozenset()
    """For dormant code: the (container id, name) of the state that keeps it from running compiled now; the hazard
    is reported only when the hot path or the step writes that state."""
    pattern: str = ""
    """A pattern whose effect was measured per torch minor (`versions.PATTERNS`): the installed torch's entry decides
    the finding's severity and note."""


@dataclass(frozen=True)
class Source:
    """A parsed function: its AST and where its lines are."""

    node: FunctionNode
    file: str
    offset: int


@dataclass(kw_only=True)
class Write:
    """One write to Python state seen on the hot path, judged by `classify` once the whole scan is done."""

    key: tuple[int, str]
    value: Any
    form: str
    """`assign`, `step` (changes every call: `+= 1`, `not x`), `selfref` (reads itself: `max(x, n)`), `mutate`."""
    where: str
    region: str
    what: str
    owner: Any
    guard: Cond | None = None
    """The dormant guard around the write (None: the write runs compiled now)."""
    literal: Any = MISSING
    """The constant assigned, for `x = False` (a hot write that cannot turn a dormant guard on)."""
    via: str = ""
    """`cell` for a closure variable, `class` for a class attribute, `global` for a module global (`global n`): torch
    minors handle each differently (`versions.PATTERNS`)."""
    read_before: bool = False
    """The hot path read this state before this write (Dynamo guards the value it finds at the call's entry)."""
    delta: float | None = None
    """The constant `+= k` adds (`-= k`: -k), else None (a nesting depth's enter and exit add up to 0)."""


@dataclass(kw_only=True)
class LoopWrite:
    """One write the step (or eager code it calls) makes between compiled calls, judged against the hot path's reads."""

    key: tuple[int, str]
    value: Any
    """The state's current value (what the first compile sees)."""
    where: str
    what: str
    owner: Any
    literal: Any = MISSING
    """The constant written (`model.eval()` writes False), else MISSING."""
    certain: bool = False
    """The written value differs on every call (`model.n = i`, `model.flag = not model.flag`)."""
    changing: bool = False
    """The written value may differ between calls (computed from `i`, a clock, under a condition on `i`)."""
    distinct: int | None = None
    """How many values it cycles through, where known (`i % 2 == 0`: 2)."""
    form: str = "assign"
    """`assign`, `step`, `selfref` or `mutate` (as for hot writes)."""
    cond_certain: bool = False
    """Written under a test that flips between calls (`if i % 2:`): two constants written there alternate."""
    conditional: bool = False
    """Written under a test that changes between calls (`if self.steps_run == n:`): some calls see it, some do not."""
    moved: bool = False
    """The written expression itself changes between calls (it reads the step's index or other changing state)."""
    record: bool = False
    """The value written is a record the step builds (a typed class: `Meta(...)`, or a factory annotated to return
    one): Dynamo guards its type and the fields the compiled code reads, not its identity."""
    inputs: tuple[Any, ...] = ()
    """The objects the written expression reads from the enclosing function's parameters, by id: the same line
    written with other inputs (`toggle(opt_g)`, then `toggle(opt_d)`) writes other values."""


@dataclass(kw_only=True)
class ScanState:
    """Everything one scan collects; parse results are cached per code object across regions and instances."""

    sources: dict[Any, Source | None] = field(default_factory=dict)
    visited: set[tuple[Any, ...]] = field(default_factory=set)
    """(code, owner id, region, hot?) of each function visit, and (code, line, ...) of each nested one."""
    writes: list[Write] = field(default_factory=list)
    live_reads: set[tuple[int, str]] = field(default_factory=set)
    """State read where the code runs compiled now (not behind a dormant guard)."""
    read_guards: dict[tuple[int, str], set[tuple[int, str]]] = field(default_factory=dict)
    """State read behind dormant guards -> the state those guards test (`if not self.enabled: return`)."""
    call_reads: set[tuple[int, str]] = field(default_factory=set)
    """State read so far in the walk of the call being walked (a region's method, from its start)."""
    reads: dict[tuple[int, str], tuple[str, str]] = field(default_factory=dict)
    """(container id, name) of state read on the hot path -> (`file:line`, region) of its first read."""
    value_reads: dict[tuple[int, str], set[tuple[str, Any]]] = field(default_factory=dict)
    """(container id, name) -> (`file:line`, code) of every hot read of it, closure cells included; code is the
    function's whose bare `return name` the read is (its caller may drop it), else None."""
    dropped_results: set[Any] = field(default_factory=set)
    """Code objects of functions some hot call drops the result of (`self.bump()` as a statement)."""
    used_results: set[Any] = field(default_factory=set)
    """Code objects of functions some hot call (or torch: a region's method, a hook) uses the result of."""
    dropping: bool = False
    """The next function visited is called as a statement: its result is dropped."""
    scalar_reads: dict[tuple[str, str, str], dict[int, set[Any]]] = field(default_factory=dict)
    """(region, `file:line`, what) -> region target (module id) -> the Python int/str values read there on `self`."""
    hazards: list[Hazard] = field(default_factory=list)
    visits: int = 0
    target: int = 0
    """id() of the region target whose hot path is being walked."""
    loop_writes: list[LoopWrite] = field(default_factory=list)
    """Writes the step makes between compiled calls."""
    loop_events: list[tuple[tuple[int, str], Any] | None] = field(default_factory=list)
    """The loop walk in source order: `(key, constant)` for each constant written, None for each compiled call."""
    loop_defer: Any = None
    """While the loop walk is inside a `with` statement's context managers: what they do after `yield`."""
    loop_conds: list[Any] = field(default_factory=list)
    """The changing conditions (`flow.Change`) around the statement the loop walk is at, callers included."""
    loop_changing: dict[tuple[int, str], str] = field(default_factory=dict)
    """State the loop walk saw change ((container id, name) -> `some`/`every`), read back by later writes."""
    hot_modules: dict[int, str] = field(default_factory=dict)
    """id() of every module inside a compiled region (their forward runs compiled) -> its region."""
    targets: set[tuple[int, str]] = field(default_factory=set)
    """(module id, method) of every compiled method."""
    shadows: list[Any] = field(default_factory=list)
    """Objects the step builds, as the loop walk knows them (`shadows`): never the real objects compiled code gets."""
    loop_resets: set[tuple[int, str]] = field(default_factory=set)
    """Containers the step empties on every call (`acts.clear()`, `self.acts = []`): the same at every call."""
    branch_reads: set[tuple[str, str, str]] = field(default_factory=set)
    """`scalar_reads` keys read under an undecided branch (`if cache is not None: cache.update(x, self.layer_idx)`)."""
    called: set[str] = field(default_factory=set)
    """Regions whose calls the step walk re-walked with what it passes (`loop.LoopWalker.rewalk`)."""
    confirmed: set[tuple[str, str, str]] = field(default_factory=set)
    """`scalar_reads` keys those re-walks reached: the calls the step makes do read them."""
    rewalking: bool = False
    """True while a re-walk runs."""
    branches: int = 0
    """How many undecided branches (`if` on an argument, `except:`) enclose the code walked now, callers included."""
    modes: list[tuple[str, str]] = field(default_factory=list)
    """Grad-mode and autocast context managers the loop walker is inside (`modes.mode_of`), callers included."""
    call_modes: dict[tuple[str, int], dict[tuple[str, ...], str]] = field(default_factory=dict)
    """(region, id of the compiled forward's code) -> the (grad, autocast, inputs requiring grad) modes the step calls
    it under -> the first call's `file:line`."""
    unset_fields: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    """Slot -> the attributes the hot path reads on it while it holds None (`meta.max_decode_seq_len`, with `meta =
    get_forward_context().attn_metadata`): what a record the loop installs there is read for."""
    record_fields: set[str] = field(default_factory=set)
    """Python fields of records the step builds with a value that changes between calls (`fields.changing_fields`)."""
    ragged_batches: str = ""
    """A DataLoader the step reads whose last batch of an epoch is smaller than the others (`shapes.ragged_loader`):
    what it hands the compiled calls changes size once per epoch."""
    step_call: str = ""
    """`file:line` of the last call from the step's side into module code (a compiled call a wrapper module's
    forward makes is located there)."""
    maybe: int = 0
    """How many enclosing constructs may skip the code walked now although the other rules read it as run: a `for`
    loop or comprehension over an iterable not known to be non-empty, an operand of `and`/`or` after the first, code
    after an early `return`/`continue`/`break` under an undecided test (`conditions.may_leave`). Only a call made
    with none of these (nor `branches`, nor a dormant guard) is certain to run on every compiled call."""
    loops: int = 0
    """How many Python `for`/`while` loops enclose the code walked now, callers included (a graph break there makes
    Dynamo skip the whole frame)."""
    step_index: tuple[Any, str] | None = None
    """(code, parameter name) of the step's call index `i`: a Python int that changes on every call."""


@dataclass
class Skips:
    """What one `Walker._maybe` added to `ScanState.maybe`, taken back when its block ends."""

    state: ScanState
    count: int

    def add(self) -> None:
        """One more reason the rest of the block may not run."""
        self.count += 1
        self.state.maybe += 1


@dataclass(frozen=True)
class Prop:
    """A property met while resolving: reading it calls its getter."""

    prop: property


@dataclass(frozen=True)
class Cond:
    """What an `if` test is worth while Dynamo traces, so the branch that cannot run compiled is not scanned as hot."""

    value: bool | None
    """The test's value under torch.compile; None when unknown."""
    eager: bool = False
    """Known from `is_compiling()` and friends alone: the other branch never runs compiled, whatever the state."""
    guards: tuple[str, ...] = ()
    """The Python state it was read from, shown (`self.training (now False)`)."""
    keys: frozenset[tuple[int, str]] = frozenset()
    """That state's (container id, name): a guard the hot path itself rewrites is not trusted."""

    def negated(self) -> Cond:
        """The value of `not test`."""
        return Cond(None if self.value is None else not self.value, self.eager, self.guards, self.keys)


UNKNOWN = Cond(None)
"""A test whose value is not known."""


SIZES = ("loop-shape", "grown")
"""Hazard kinds that are a size changing between calls: a dynamic region absorbs them, the probe's recompiles measure
them."""
