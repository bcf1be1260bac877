"""Every CC3xx Python example produces exactly its marked codes on exactly the marked lines."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from contract.check import check
from tests.rules.test_rules import EXAMPLES, expected_codes


def python_examples() -> list[Path]:
    """Python examples of the static scan (one model each, `build()`, optional `REGION` glob)."""
    return sorted(EXAMPLES.glob("CC3*.py"))


def write_contract(tmp_path: Path, module: str, region: str) -> Path:
    path = tmp_path / "contract.toml"
    path.write_text(f'[contract]\nname = "example"\nmodel = "{module}:build"\n\n'
                    f'[[region]]\nname = "r"\nmodule = "{region}"\nbackend = "eager"\n')
    return path


def observed(findings: list, path: Path, location: str | None) -> set[tuple[str, int]]:
    """(code, line) of each scan finding; a module-path location maps to the line marked for its code."""
    marks = expected_codes(path)
    out = set()
    for f in findings:
        if not f.code.startswith("CC3"):
            continue
        file, _, line = f.location.rpartition(":")
        if file.endswith(path.name):
            out.add((f.code, int(line)))
        elif f.location == location:
            out.update((f.code, n) for n in marks.get(f.code, [0]))
        else:
            out.add((f.code, -1))
    return out


def test_there_is_a_python_example_for_every_scan_rule() -> None:
    from contract.rules import cc3xx

    assert {p.name[:5] for p in python_examples()} == {r.code for r in cc3xx.RULES}


@pytest.mark.parametrize("path", python_examples(), ids=lambda p: p.name)
def test_python_example_is_reported_with_its_code_on_the_marked_line(path: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    mod = importlib.import_module(path.stem)
    contract = write_contract(tmp_path, path.stem, getattr(mod, "REGION", ""))
    _, _, findings = check(contract, mod.build())
    expected = {(code, line) for code, lines in expected_codes(path).items() for line in lines}
    assert observed(findings, path, getattr(mod, "LOCATION", None)) == expected, [str(f) for f in findings]
