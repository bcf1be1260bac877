"""Codes, docs and example files stay in step; every TOML example produces exactly the codes marked inline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contract.pipeline import check
from contract.report.catalog import RULES, get

EXAMPLES = Path(__file__).parent / "examples"
EXPECT = re.compile(r"#\s*expect:\s*((?:CC\d{3}[ ,]*)+)")
SECTIONS = ("## What it does", "## Why it matters", "## Example", "## Fix")


def expected_codes(path: Path) -> dict[str, list[int]]:
    """Codes marked `# expect: CCxxx` in an example, with their line numbers."""
    out: dict[str, list[int]] = {}
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        for code in re.findall(r"CC\d{3}", m.group(1)) if m else ():
            out.setdefault(code, []).append(lineno)
    return out


def toml_examples() -> list[Path]:
    """TOML examples run by the generic runner (those marked `# runner: custom` are run by their own tests)."""
    return sorted(p for p in EXAMPLES.glob("*.toml") if "# runner: custom" not in p.read_text())


def test_rules_are_a_tuple_ordered_by_unique_code() -> None:
    codes = [r.code for r in RULES]
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    assert all(re.fullmatch(r"CC\d{3}", c) for c in codes)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_documents_what_why_example_and_fix(rule) -> None:
    positions = [rule.doc.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), rule.code


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_an_example_file_marking_its_code(rule) -> None:
    files = [p for p in EXAMPLES.iterdir() if p.name.startswith(rule.code)]
    assert files, f"no example for {rule.code} in {EXAMPLES}"
    assert any(rule.code in expected_codes(p) for p in files)


def test_every_marked_code_is_a_known_rule() -> None:
    for path in EXAMPLES.iterdir():
        for code in expected_codes(path):
            assert get(code) is not None, f"{path.name} expects unknown {code}"


@pytest.mark.parametrize("path", toml_examples(), ids=lambda p: p.name)
def test_toml_example_produces_exactly_the_marked_codes(path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from contract.document.load import load
    from contract.document.refs import load_refs
    from contract.pipeline import check_loaded

    contract, loaded = load(path)
    ref = contract.meta.model if contract and contract.meta else None
    model, _, unbuilt = load_refs(ref, None)
    if contract is None:
        _, _, findings = check(path, model)
    else:
        _, _, findings = check_loaded(contract, [*loaded, *unbuilt], model)
    assert {f.code for f in findings} == set(expected_codes(path)), [str(f) for f in findings]
