"""The per-torch-version table (`contract/checks/hotpath/versions.py`): each measurement it holds is what its corpus
case records for that torch, and a finding of a measured pattern is an error only on a torch where it misbehaves."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import ModuleType

import pytest

from contract.checks.hotpath import versions
from contract.checks.hotpath.rules import RULES
from contract.checks.hotpath.versions import BREAKS, CLEAN, RECOMPILES, STALE, Pattern, Seen
from tests.checks.hotpath import test_corpus, test_holdout_behaviour, test_holdout_recall

MEASUREMENTS = [
    (name, minor, seen.effect, case)
    for name, pattern in versions.PATTERNS.items()
    for minor, seen in pattern.seen.items()
    for case in seen.cases
]


def case_of(spec: str) -> ModuleType:
    """`corpus/h04_module_global` or `holdout3/h01_...`: the case module."""
    corpus, name = spec.split("/")
    if corpus == "corpus":
        return test_corpus.load_case(name)
    return test_holdout_behaviour.load_case(name, corpus)


def recorded_on(case: ModuleType, minor: tuple[int, int]) -> dict[str, int]:
    """What the case records for a torch minor: its `OBSERVED_BY_TORCH` entry, else `OBSERVED` (measured the same)."""
    return getattr(case, "OBSERVED_BY_TORCH", {}).get(f"{minor[0]}.{minor[1]}", case.OBSERVED)


@pytest.mark.parametrize(
    ("name", "minor", "effect", "spec"), MEASUREMENTS, ids=[f"{n}-{m[0]}.{m[1]}-{c}" for n, m, _, c in MEASUREMENTS]
)
def test_each_measurement_is_what_its_case_records_on_that_torch(name: str, minor, effect: str, spec: str) -> None:
    case = case_of(spec)
    counts = recorded_on(case, minor)
    frames = getattr(case, "FRAMES", 1)
    if effect == RECOMPILES:
        assert counts["compiles_over_8_steps"] > frames, counts
    elif effect == BREAKS:
        assert counts["graph_breaks"] > 0, counts
    else:  # clean, or stale: one compile either way (stale is the value the compiled code writes: README)
        assert counts == {"compiles_over_8_steps": frames, "graph_breaks": 0}, counts


def test_every_pattern_is_measured_on_every_torch_the_corpora_were_measured_on() -> None:
    for name, pattern in versions.PATTERNS.items():
        assert sorted(pattern.seen) == list(versions.ALL_MINORS), name
        assert pattern.rule in {r.code for r in RULES}, name


SYNTHETIC = Pattern(
    rule="CC301",
    shown="x",
    clean="torch {minor} leaves it alone",
    seen={(2, 11): Seen(STALE, ("c",)), (2, 13): Seen(RECOMPILES, ("c",)), (2, 15): Seen(CLEAN, ("c",))},
)


@pytest.mark.parametrize(
    ("minor", "effect", "basis"),
    [
        ((2, 13), RECOMPILES, (2, 13)),
        ((2, 17), CLEAN, (2, 15)),
        ((2, 10), STALE, (2, 11)),
        ((2, 12), None, None),
        ((2, 14), None, None),
    ],
)
def test_an_unmeasured_torch_reads_as_the_nearest_measured_one_outside_the_range_and_unknown_between_disagreeing_ones(
    minor, effect, basis
) -> None:
    assert versions.effect_on(SYNTHETIC, minor) == (effect, basis)


def test_a_finding_is_an_error_where_measured_to_misbehave_and_a_warning_naming_those_versions_where_clean(
    monkeypatch,
) -> None:
    monkeypatch.setitem(versions.PATTERNS, "synthetic", SYNTHETIC)
    assert versions.verdict("synthetic", (2, 13)) == versions.Verdict(report=True, lowered=False, note="")
    clean = versions.verdict("synthetic", (2, 15))
    assert clean.lowered and "torch 2.15 leaves it alone" in clean.note
    assert "recompiles every call on torch 2.13" in clean.note and "first call's value on torch 2.11" in clean.note
    newer = versions.verdict("synthetic", (2, 16))
    assert newer.lowered and newer.note.startswith("torch 2.16 was not measured; torch 2.15 leaves it alone")
    assert versions.verdict("synthetic", (2, 12)).lowered


def test_a_pattern_measured_harmless_on_every_torch_is_not_reported(monkeypatch) -> None:
    harmless = Pattern(rule="CC304", shown="x", clean="", seen={(2, 13): Seen(CLEAN, ("c",))})
    monkeypatch.setitem(versions.PATTERNS, "harmless", harmless)
    assert not versions.verdict("harmless", (2, 13)).report


UNREAD = {
    "h04_module_global": "global-counter-unread",
    "h58_helper_module_global": "global-counter-unread",
    "h05_closure_cell": "cell-counter-unread",
    "h54_hook_closure_counter": "cell-counter-unread",
}
"""Counters only their own update reads (h05 returns its count to a caller that drops it), and their pattern."""


@pytest.mark.parametrize("name", UNREAD)
@pytest.mark.parametrize("minor", versions.ALL_MINORS)
def test_an_unread_global_or_cell_counter_without_a_step_is_an_error_only_where_torch_recompiles_or_stales_it(
    name: str, minor, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(versions, "torch_minor", lambda: minor)
    (found,) = test_corpus.findings_for(name, tmp_path, probe=False)
    effect = versions.PATTERNS[UNREAD[name]].seen[minor].effect
    assert found.code == "CC301" and found.severity == ("warning" if effect == CLEAN else "error"), str(found)
    if effect == CLEAN:
        assert f"torch {minor[0]}.{minor[1]} does not guard" in found.message and "an error there" in found.message


@pytest.mark.parametrize(
    ("corpus", "name"),
    [
        ("holdout", "h30_module_global_counter"),
        ("holdout", "h27_closure_counter"),
        ("holdout", "h33_helper_global_tick"),
    ],
)
def test_a_global_or_cell_counter_the_compiled_code_also_reads_stays_an_error_where_unread_ones_are_clean(
    corpus: str, name: str, tmp_path: Path, monkeypatch
) -> None:
    """h30 branches on it, h27 multiplies by it, h33 returns it to a caller that uses it: all recompile on 2.15."""
    monkeypatch.setattr(versions, "torch_minor", lambda: (2, 15))
    found = test_holdout_recall.findings(corpus, name, tmp_path, probe=False, step=False)
    assert [(f.code, f.severity) for f in found] == [("CC301", "error")], [str(f) for f in found]


@pytest.mark.parametrize(("minor", "noted"), [((2, 13), False), ((2, 15), True)])
def test_random_in_arithmetic_names_the_torch_that_breaks_on_it_and_random_in_a_condition_does_not_change(
    minor, noted: bool, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(versions, "torch_minor", lambda: minor)
    (value,) = test_corpus.findings_for("h24_random", tmp_path, probe=False)
    (tested,) = test_holdout_recall.findings(
        "holdout", "h31_python_random_drop_path", tmp_path, probe=False, step=False
    )
    assert (value.code, value.severity, tested.code, tested.severity) == ("CC304", "warning", "CC304", "warning")
    assert ("without a break" in value.message) == noted and "measured" not in tested.message


def test_is_exporting_on_a_torch_between_two_minors_that_disagree_leaves_both_branches_dormant(
    tmp_path: Path, monkeypatch
) -> None:
    """With 2.12 unmeasured, h44's counter under `if not is_exporting():` is a warning there (2.11 and 2.13 differ)."""
    from contract.checks.hotpath import conditions

    measured = versions.PATTERNS["not-exporting-counter"]
    gap = dataclasses.replace(measured, seen={m: s for m, s in measured.seen.items() if m != (2, 12)})
    monkeypatch.setitem(versions.PATTERNS, "not-exporting-counter", gap)
    monkeypatch.setattr(versions, "torch_minor", lambda: (2, 12))
    monkeypatch.setattr(conditions, "_KNOWN_UNDER_COMPILE", {})
    found = test_corpus.findings_for("h44_not_exporting_counter", tmp_path, probe=False)
    assert [(f.code, f.severity) for f in found] == [("CC301", "warning")], [str(f) for f in found]
