"""Every CC3xx Python example produces exactly its marked codes on exactly the marked lines."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from contract.pipeline import check
from tests import ROOT as ROOT_DIR
from tests.report.test_catalog import EXAMPLES, expected_codes


def python_examples() -> list[Path]:
    """Python examples of the static scan (one model each, `build()`, optional `REGION` glob)."""
    return sorted(EXAMPLES.glob("CC3*.py"))


def write_contract(tmp_path: Path, module: str, region: str) -> Path:
    """The example's contract; the probe is off, so an example's `step` is read by the scan only (CC310, CC311)."""
    path = tmp_path / "contract.toml"
    path.write_text(
        f'[contract]\nname = "example"\nmodel = "{module}:build"\n\n'
        f'[[region]]\nname = "r"\nmodule = "{region}"\nbackend = "eager"\n\n[probe]\nenabled = false\n'
    )
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
    from contract.checks.hotpath import rules as cc3xx

    assert {p.name[:5] for p in python_examples()} == {r.code for r in cc3xx.RULES}


@pytest.mark.parametrize("path", python_examples(), ids=lambda p: p.name)
def test_python_example_is_reported_with_its_code_on_the_marked_line(path: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    mod = importlib.import_module(path.stem)
    contract = write_contract(tmp_path, path.stem, getattr(mod, "REGION", ""))
    _, _, findings = check(contract, mod.build(), step=getattr(mod, "step", None))
    expected = {(code, line) for code, lines in expected_codes(path).items() for line in lines}
    assert observed(findings, path, getattr(mod, "LOCATION", None)) == expected, [str(f) for f in findings]


def _scan(path: Path, tmp_path: Path) -> list:
    """CC3xx findings of the example at `path` (its directory must be on sys.path)."""
    mod = importlib.import_module(path.stem)
    contract = write_contract(tmp_path, path.stem, getattr(mod, "REGION", ""))
    _, _, findings = check(contract, mod.build(), step=getattr(mod, "step", None))
    return [f for f in findings if f.code.startswith("CC3")]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("CC301*.py")), ids=lambda p: p.name)
def test_cc301_is_an_error_unless_marked_warning_and_a_dormant_one_names_its_flag(
    path: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    lines = path.read_text().splitlines()
    for f in _scan(path, tmp_path):
        if f.code != "CC301":
            continue
        line = lines[int(f.location.rpartition(":")[2]) - 1]
        dormant = "expect: CC301 warning" in line
        assert f.severity == ("warning" if dormant else "error"), str(f)
        assert ("once that flag is on" in f.message and "(now False)" in f.message) == dormant, str(f)


def test_dormant_counter_names_its_guard_when_the_step_turns_it_on_and_is_silent_otherwise(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    messages = {f.location.rpartition(":")[2]: f.message for f in _scan(EXAMPLES / "CC301_dormant.py", tmp_path)}
    text = (EXAMPLES / "CC301_dormant.py").read_text().splitlines()
    assert "self.training (now False)" in messages[str(text.index(next(x for x in text if "seen_tokens +=" in x)) + 1)]
    assert str(text.index(next(x for x in text if "self.calls +=" in x)) + 1) not in messages


@pytest.mark.parametrize("cwd", ["examples", "repo", "elsewhere"])
def test_allow_where_matches_a_path_suffix_whatever_the_working_directory(
    cwd: str, tmp_path: Path, monkeypatch
) -> None:
    """`where = "examples/CC301_....py:14"` silences the finding from the examples folder (location `CC301_...:14`),
    the repository root (`tests/report/examples/CC301_...:14`) and an unrelated folder (sys.path-relative)."""
    example = EXAMPLES / "CC301_python_counter_on_hot_path.py"
    line = expected_codes(example)["CC301"][0]
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.chdir({"examples": EXAMPLES, "repo": ROOT_DIR, "elsewhere": tmp_path}[cwd])
    contract = write_contract(tmp_path, example.stem, "")
    entry = '\n[[allow]]\ncode = "CC301"\nwhere = "{}"\nreason = "{}"\n'
    contract.write_text(
        contract.read_text()
        + entry.format(f"examples/{example.name}:{line}", "kept on purpose")
        + entry.format(f"ples/{example.name}:{line}", "not at a / boundary: silences nothing")
    )
    _, _, findings = check(contract, importlib.import_module(example.stem).build())
    assert [f.code for f in findings if f.code in ("CC301", "CC008")] == ["CC008"], [str(f) for f in findings]
    assert "ples/" in next(f.message for f in findings if f.code == "CC008")


def test_cc310_is_an_error_where_the_step_changes_the_value_every_call_and_a_warning_where_it_may_settle(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    path = EXAMPLES / "CC310_state_changed_between_calls.py"
    lines = path.read_text().splitlines()
    found = [f for f in _scan(path, tmp_path) if f.code == "CC310"]
    assert len(found) == 3, [str(f) for f in found]
    for f in found:
        line = lines[int(f.location.rpartition(":")[2]) - 1]
        assert f.severity == ("warning" if "expect: CC310 warning" in line else "error"), str(f)
        assert "read at" in f.message, str(f)


def test_without_a_step_the_scan_reports_nothing_the_loop_changes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    for name in ("CC310_state_changed_between_calls", "CC311_hook_registered_by_step"):
        mod = importlib.import_module(name)
        _, _, findings = check(write_contract(tmp_path, name, ""), mod.build())
        assert [f for f in findings if f.code in ("CC310", "CC311")] == [], [str(f) for f in findings]
