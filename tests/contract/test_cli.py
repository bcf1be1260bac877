"""The compile-contract CLI: linter-style text, stable JSON, exit codes 0/1/2, rules and explain."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contract.cli import main
from contract.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "rules" / "examples"

BROKEN = """
[contract]
name = "broken"
model = "example_models:build"

[[region]]
name = "layers"
module = "layers.*"
recompile_budjet = 1

[[region]]
name = "head"
module = "haed"
fullgraph = "yes"
"""


@pytest.fixture(autouse=True)
def _examples_on_path(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_demo_contract_passes_with_a_clean_report(capsys) -> None:
    assert main(["check", str(ROOT / "contracts" / "demo.toml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("contract check passed") and "2 regions" in out


def test_typo_bad_type_and_unmatched_glob_are_all_listed_in_text(write_contract, capsys) -> None:
    path = write_contract(BROKEN)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"contract check failed: 3 findings in {path} (3 errors, 0 warnings)")
    assert "region[0].recompile_budjet: CC001 unknown key 'recompile_budjet'" in out
    assert "region[1].fullgraph: CC003" in out and "region[1].module: CC501" in out
    assert "    fix: did you mean recompile_budget?" in out


def test_json_output_has_stable_keys(write_contract, capsys) -> None:
    path = write_contract(BROKEN)
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["contract"] == str(path)
    assert {f["code"] for f in report["findings"]} == {"CC001", "CC003", "CC501"}
    assert all(set(f) == {"code", "severity", "location", "message", "fix"} for f in report["findings"])


@pytest.mark.parametrize("args,needle", [
    (["check", "/nonexistent/contract.toml"], "no such contract file"),
    (["check", "{good}", "--model", "no_such_pkg:build"], "cannot import 'no_such_pkg'"),
    (["check", "{good}", "--model", "example_models:nothing"], "has no attribute 'nothing'"),
    (["explain", "CC999"], "unknown rule code"),
])
def test_usage_errors_exit_2_with_one_line(args, needle, write_contract, capsys) -> None:
    good = write_contract('[contract]\nname = "g"\n[[region]]\nname = "l"\nmodule = "layers.*"\n')
    assert main([a.replace("{good}", str(good)) for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_model_factory_that_raises_is_reported_with_its_location(tmp_path, write_contract, capsys, monkeypatch) -> None:
    (tmp_path / "bad_factory.py").write_text("def build():\n    raise RuntimeError('no weights')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    good = write_contract('[contract]\nname = "g"\nmodel = "bad_factory:build"\n')
    assert main(["check", str(good)]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: no weights" in err and "bad_factory.py:2" in err


def test_rules_lists_every_rule_and_explain_prints_each_doc(capsys) -> None:
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == [r.code for r in RULES]
    for rule in RULES:
        assert main(["explain", rule.code.lower()]) == 0
        assert "## Fix" in capsys.readouterr().out


def test_console_script_runs_in_a_fresh_process() -> None:
    exe = Path(sys.executable).with_name("compile-contract")
    proc = subprocess.run([str(exe), "explain", "CC001"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("CC001 unknown-key")


def test_output_piped_into_a_reader_that_leaves_is_not_a_traceback() -> None:
    exe = Path(sys.executable).with_name("compile-contract")
    proc = subprocess.run(f"'{exe}' explain CC001 | head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("CC001") and "Traceback" not in proc.stderr
