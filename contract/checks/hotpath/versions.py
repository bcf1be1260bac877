"""Per torch version: what torch.compile was measured to do with each hazard pattern whose effect differs between
torch minors, with the corpus case that shows each measurement (tests/checks/hotpath/corpus and holdout*/, recorded
there as `OBSERVED_BY_TORCH`).

A finding of such a pattern takes its severity from the installed torch's entry (`verdict`): the rule's own severity
where the pattern misbehaves; a warning naming the versions where it misbehaves on a torch where it was measured
clean (the code is still wrong for anyone who runs it on those); nothing where it was measured harmless everywhere.
A torch newer than every measured one is read as the newest measured (the closest evidence, and what the rules of
patterns that never changed assume too); one between two measured minors that disagree is unknown: a warning. With
a step, the probe measures the installed torch itself and outranks this table (`contract.checks.hotpath.check`).
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.checks.hotpath.rules import RULES
from contract.env import torch_version

Minor = tuple[int, int]

RECOMPILES = "recompiles"
"""Dynamo guards the value and compiles again whenever it changes: a counter recompiles every call."""
BREAKS = "breaks"
"""Dynamo breaks the graph there, every call."""
STALE = "stale"
"""No recompile, but the compiled code keeps writing the first call's value (wrong results, silently)."""
CLEAN = "clean"
"""One compile, no graph break, and the Python state ends as eager code leaves it."""
MISBEHAVES = frozenset({RECOMPILES, BREAKS, STALE})

_SHOWN = {RECOMPILES: "recompiles every call", BREAKS: "breaks the graph", STALE: "keeps the first call's value"}


@dataclass(frozen=True)
class Seen:
    """One measurement: the effect on one torch minor and the corpus cases (`corpus/name`) that show it."""

    effect: str
    cases: tuple[str, ...]
    note: str = ""
    """How that torch misbehaves where it is not what the rule says (`stale`, a break), for the finding's note."""


@dataclass(frozen=True)
class Pattern:
    """A hazard pattern whose effect under torch.compile was measured per torch minor."""

    rule: str
    """The rule whose findings it is (`CC301`)."""
    shown: str
    """What the code looks like, for the docs."""
    clean: str
    """Why a torch measured clean leaves it alone, for the finding's note (`{minor}` is that torch)."""
    seen: dict[Minor, Seen]


def _all(effect: str, cases: tuple[str, ...], *minors: Minor) -> dict[Minor, Seen]:
    return {m: Seen(effect, cases) for m in minors}


_GLOBAL = ("corpus/h04_module_global", "corpus/h58_helper_module_global")
_CELL = ("corpus/h05_closure_cell", "corpus/h54_hook_closure_counter")


ALL_MINORS: tuple[Minor, ...] = ((2, 11), (2, 12), (2, 13), (2, 14), (2, 15))
"""The torch minors the corpora were measured on (backend eager, CPU tensors; hold-out READMEs: "torch 2.12, 2.14
and 2.15")."""

_CELL_2_11 = (
    "torch 2.11 does not guard a closure cell: no recompile there, but the compiled code keeps writing the first "
    "call's value"
)

PATTERNS: dict[str, Pattern] = {
    "global-counter-unread": Pattern(
        rule="CC301",
        shown="`global n; n += 1` in compiled code (or a helper it calls), `n` read nowhere else on the hot path",
        clean="torch {minor} does not guard a module global only its own update reads, and it counts right",
        seen={
            **_all(RECOMPILES, _GLOBAL, (2, 11), (2, 12), (2, 13)),
            **_all(CLEAN, _GLOBAL, (2, 14), (2, 15)),
        },
    ),
    "global-counter-read": Pattern(
        rule="CC301",
        shown="`global n; n += 1` whose value the compiled code also reads (`if n % 4 == 0:`, `return x * n`)",
        clean="torch {minor} does not guard it",
        seen=_all(RECOMPILES, ("holdout/h30_module_global_counter", "holdout/h33_helper_global_tick"), *ALL_MINORS),
    ),
    "cell-counter-unread": Pattern(
        rule="CC301",
        shown="`nonlocal n; n += 1` in a closure the compiled code calls (a hook factory's counter), `n` read "
        "nowhere else, or only returned to a caller that drops it",
        clean="torch {minor} does not guard a closure cell only its own update reads, and it counts right",
        seen={
            (2, 11): Seen(STALE, _CELL, _CELL_2_11),
            **_all(RECOMPILES, _CELL, (2, 12), (2, 13)),
            **_all(CLEAN, _CELL, (2, 14), (2, 15)),
        },
    ),
    "cell-counter-read": Pattern(
        rule="CC301",
        shown="`nonlocal n; n += 1` whose value the compiled code also reads (`return x * (1 + 1 / n)`)",
        clean="torch {minor} does not guard it",
        seen={
            (2, 11): Seen(STALE, ("holdout/h27_closure_counter",), _CELL_2_11),
            **_all(RECOMPILES, ("holdout/h27_closure_counter",), (2, 12), (2, 13), (2, 14), (2, 15)),
        },
    ),
    "class-counter": Pattern(
        rule="CC301",
        shown="`type(self).n += 1`: a counter kept as a class attribute",
        clean="torch {minor} does not guard it",
        seen={
            (2, 11): Seen(
                BREAKS,
                ("corpus/h03_class_attribute",),
                "torch 2.11 breaks the graph on a class-attribute write and keeps writing the first call's value",
            ),
            (2, 12): Seen(
                BREAKS,
                ("corpus/h03_class_attribute",),
                "torch 2.12 breaks the graph on a class-attribute write, every call, and recompiles too",
            ),
            **_all(RECOMPILES, ("corpus/h03_class_attribute",), (2, 13), (2, 14), (2, 15)),
        },
    ),
    "not-exporting-counter": Pattern(
        rule="CC301",
        shown="`if not torch.compiler.is_exporting(): self.n += 1`: code under that test runs compiled where "
        "`is_exporting()` is False inside torch.compile",
        clean="`is_exporting()` is True inside torch.compile on torch {minor}: the code never runs compiled there",
        seen={
            (2, 11): Seen(CLEAN, ("corpus/h44_not_exporting_counter",)),
            **_all(RECOMPILES, ("corpus/h44_not_exporting_counter",), (2, 12), (2, 13), (2, 14), (2, 15)),
        },
    ),
    "random-value": Pattern(
        rule="CC304",
        shown="`random.random()` used as a number in tensor arithmetic (`x * random.random()`), outside any test "
        "or Python loop",
        clean="torch {minor} traces random.random() into the graph without a break",
        seen={
            **_all(BREAKS, ("corpus/h24_random",), (2, 11), (2, 12), (2, 13)),
            **_all(CLEAN, ("corpus/h24_random",), (2, 14), (2, 15)),
        },
    ),
    "random-in-test": Pattern(
        rule="CC304",
        shown="`random.random()` in a condition (`if random.random() < self.p:`, stochastic depth)",
        clean="torch {minor} does not break on it",
        seen=_all(BREAKS, ("holdout/h31_python_random_drop_path",), *ALL_MINORS),
    ),
}
"""Every pattern measured to behave differently on some torch minor, and its look-alikes measured the same on all."""


def torch_minor() -> Minor:
    """The installed torch's (major, minor), read from package metadata so doctor never imports torch; without torch,
    the newest measured minor."""
    installed = torch_version()
    if installed is None:
        return ALL_MINORS[-1]
    major, minor = installed.split("+")[0].split(".")[:2]
    return int(major), int(minor)


@dataclass(frozen=True)
class Verdict:
    """How a finding of one pattern reads on one torch."""

    report: bool
    """False: measured harmless on every torch minor (no finding)."""
    lowered: bool
    """A warning whatever the rule's severity: not measured to misbehave on this torch."""
    note: str
    """What this torch does with it, for the finding's message ("" where it does what the rule says)."""


def effect_on(pattern: Pattern, minor: Minor) -> tuple[str | None, Minor | None]:
    """The pattern's effect on a torch minor and the measured minor it comes from: its own; the newest measured for a
    newer torch, the oldest for an older one; for one between two measured minors, theirs where they agree, else
    (None, None)."""
    if minor in pattern.seen:
        return pattern.seen[minor].effect, minor
    measured = sorted(pattern.seen)
    if minor > measured[-1] or minor < measured[0]:
        basis = measured[-1] if minor > measured[-1] else measured[0]
        return pattern.seen[basis].effect, basis
    below = max(m for m in measured if m < minor)
    above = min(m for m in measured if m > minor)
    same = pattern.seen[below].effect == pattern.seen[above].effect
    return (pattern.seen[below].effect, below) if same else (None, None)


def verdict(name: str, minor: Minor | None = None) -> Verdict:
    """How a finding of pattern `name` reads on a torch minor (default: the installed one)."""
    pattern = PATTERNS[name]
    minor = minor or torch_minor()
    effect, basis = effect_on(pattern, minor)
    if not any(s.effect in MISBEHAVES for s in pattern.seen.values()):
        return Verdict(report=False, lowered=True, note="")
    if effect in MISBEHAVES and basis is not None:
        note = pattern.seen[basis].note
        if note and basis != minor:
            note = f"torch {_version(minor)} was not measured; {note}"
        return Verdict(report=True, lowered=False, note=note)
    where = _misbehaving(pattern)
    if effect == CLEAN and basis is not None:
        head = pattern.clean.format(minor=_version(basis))
        if basis != minor:
            head = f"torch {_version(minor)} was not measured; {head}"
        there = ", an error there" if _severity(pattern.rule) == "error" else ""
        note = f"{head}, measured on {_case(pattern.seen[basis].cases[0])}; {where}: a warning here{there}"
        return Verdict(report=True, lowered=True, note=note)
    note = f"not measured on torch {_version(minor)}; {where}: a warning here"
    return Verdict(report=True, lowered=True, note=note)


def _misbehaving(pattern: Pattern) -> str:
    """`it recompiles every call on torch 2.11-2.13`: the measured minors where the pattern misbehaves, by effect."""
    parts = []
    for effect in (RECOMPILES, BREAKS, STALE):
        minors = sorted(m for m, s in pattern.seen.items() if s.effect == effect)
        if minors:
            parts.append(f"{_SHOWN[effect]} on torch {versions_text(minors)}")
    return "it " + " and ".join(parts)


def versions_text(minors: list[Minor]) -> str:
    """`2.11-2.13, 2.15`: sorted minors, consecutive runs of one major folded."""
    runs: list[list[Minor]] = []
    for m in sorted(minors):
        if runs and runs[-1][-1][0] == m[0] and runs[-1][-1][1] + 1 == m[1]:
            runs[-1].append(m)
        else:
            runs.append([m])
    return ", ".join(_version(r[0]) if len(r) == 1 else f"{_version(r[0])}-{_version(r[-1])}" for r in runs)


def _severity(code: str) -> str:
    """The rule's own severity."""
    return next(r.severity for r in RULES if r.code == code)


def _version(minor: Minor) -> str:
    return f"{minor[0]}.{minor[1]}"


def _case(case: str) -> str:
    """`corpus h04_module_global`: a case as the tests name it."""
    return case.replace("/", " ")
