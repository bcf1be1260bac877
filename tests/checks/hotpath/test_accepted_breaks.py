"""A region's `graph_break_budget` accepts that many static graph-break sites (CC304/CC305/CC312); more are all
reported."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from contract.pipeline import check
from tests.report.test_catalog import EXAMPLES


def break_codes(tmp_path: Path, budget: int, monkeypatch) -> list[str]:
    """CC304/CC305 findings on the three-site example (`.tolist()`, `.item()`, `int()`) under a given budget."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    example = importlib.import_module("CC305_value_read_into_python")
    path = tmp_path / "contract.toml"
    path.write_text(
        '[contract]\nname = "breaks"\n\n[[region]]\nname = "r"\nmodule = ""\nbackend = "eager"\n'
        f"graph_break_budget = {budget}\n\n[probe]\nenabled = false\n"
    )
    _, _, findings = check(path, example.build())
    return sorted(f.code for f in findings if f.code in ("CC304", "CC305"))


@pytest.mark.parametrize(("budget", "expected"), [(0, ["CC305"] * 3), (2, ["CC305"] * 3), (3, [])])
def test_break_sites_within_the_budget_are_accepted_and_beyond_it_all_are_reported(
    budget: int, expected: list[str], tmp_path: Path, monkeypatch
) -> None:
    assert break_codes(tmp_path, budget, monkeypatch) == expected
