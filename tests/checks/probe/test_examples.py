"""Every CC4xx TOML example, run with its step through the dynamic probe, produces exactly its marked codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.pipeline import check
from tests.report.test_catalog import EXAMPLES, expected_codes


def probe_examples() -> list[Path]:
    return sorted(EXAMPLES.glob("CC4*.toml"))


def test_there_is_a_toml_example_for_every_probe_rule() -> None:
    from contract.checks.probe import rules as cc4xx

    assert {p.name[:5] for p in probe_examples()} == {r.code for r in cc4xx.RULES}


@pytest.mark.parametrize("path", probe_examples(), ids=lambda p: p.name)
def test_probe_example_produces_exactly_the_marked_codes(path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from contract.document.load import load
    from contract.document.refs import build_model, resolve

    contract, _ = load(path)
    _, _, findings = check(path, build_model(contract.meta.model), step=resolve(contract.meta.step, "step"))
    assert {f.code for f in findings} == set(expected_codes(path)), [str(f) for f in findings]
