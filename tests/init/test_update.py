"""`compile-contract init --update`: a re-run changes only the keys the new recording contradicts, prints the diff,
keeps every other line byte-identical, and writes all or nothing."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from contract.cli import main
from contract.document.load import load

INIT = ["init", "contract.demo:build_model", "--step", "contract.demo:step", "--backend", "eager", "--steps", "6"]


@pytest.fixture
def contract_file(tmp_path: Path, capsys) -> Path:
    """A contract generated from the demo model and its fixed-shape step."""
    path = tmp_path / "demo.toml"
    assert main([*INIT, "-o", str(path)]) == 0, capsys.readouterr()
    capsys.readouterr()
    return path


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_a_rerun_that_agrees_changes_nothing(contract_file: Path, capsys) -> None:
    before = contract_file.read_bytes()
    assert main(["init", "--update", "-o", str(contract_file)]) == 0
    assert f"no change: the run agrees with {contract_file}" in capsys.readouterr().out
    assert contract_file.read_bytes() == before


def test_a_recompile_after_warm_up_raises_only_recompile_budget_and_prints_the_diff(
    contract_file: Path, capsys
) -> None:
    before = contract_file.read_text()
    code = main(["init", "--update", "-o", str(contract_file), "--step", "tests.init.models:late_shape_step"])
    out = capsys.readouterr().out
    assert code == 0, out
    after = contract_file.read_text()
    changed = changed_lines(before, after)
    assert [line for line in changed if line.startswith("-")] == ["-recompile_budget = 0", "-recompile_budget = 0"]
    assert [line for line in changed if not line.startswith(("-", "+#", "+  "))] == ["+recompile_budget = 1"] * 2
    assert all("size mismatch" in line or line.startswith("+#   ") for line in changed if line.startswith("+#"))
    assert out.startswith(f"--- a/{str(contract_file).lstrip('/')}") and "+recompile_budget = 1" in out
    contract, findings = load(contract_file)
    assert findings == [] and contract is not None
    assert [r.recompile_budget for r in contract.regions] == [1, 1]


def test_a_longer_warm_up_raises_warmup_compiles_not_the_budget(contract_file: Path, capsys) -> None:
    assert main(["init", "--update", "-o", str(contract_file), "--step", "tests.init.models:early_shape_step"]) == 0
    contract, _ = load(contract_file)
    assert contract is not None
    assert [(r.warmup_compiles, r.recompile_budget) for r in contract.regions] == [(2, 0), (2, 0)]


def test_a_new_graph_break_raises_the_budget_and_lists_the_site(tmp_path: Path, capsys) -> None:
    path = tmp_path / "kernels.toml"
    steps = ["--step", "examples.scenario5_kernels:kernel_step", "--backend", "eager", "--steps", "4"]
    assert main(["init", "examples.scenario5_kernels:build_kernel_model", *steps, "-o", str(path)]) == 0
    before = path.read_text()
    assert main(["init", "examples.scenario5_kernels:build_item_model", "--update", "-o", str(path)]) == 0
    after = path.read_text()
    changed = changed_lines(before, after)
    assert "-graph_break_budget = 0" in changed and "+graph_break_budget = 1" in changed
    comment = " ".join(line[2:].strip() for line in changed if line.startswith("+#"))
    assert "1 distinct graph-break site per instance" in comment
    assert "examples/scenario5_kernels.py:" in comment and "Tensor.item()" in comment
    kept = [line for line in before.splitlines() if line != "graph_break_budget = 0"]
    assert all(line in after.splitlines() for line in kept)


def test_a_key_inherited_from_defaults_is_written_into_the_region(tmp_path: Path, write_contract, capsys) -> None:
    path = write_contract(
        '# hand-written\n[contract]\nname = "demo"\nmodel = "contract.demo:build_model"\n'
        'step = "tests.init.models:late_shape_step"\n\n[defaults]\nbackend = "eager"  # fast\non_breach = "fail"\n\n'
        '[[region]]\nname = "layers"\nmodule = "layers.*"\n\n[probe]\nsteps = 6\n\n'
        '[monitor]\nsnapshot_path = "snap-{rank}.prom"\n'
    )
    before = path.read_text()
    assert main(["init", "--update", "-o", str(path)]) == 0, capsys.readouterr()
    after = path.read_text()
    head, tail = before.split('module = "layers.*"\n')
    assert after.startswith(head + 'module = "layers.*"\n') and after.endswith(tail)
    assert after[len(head) :].startswith('module = "layers.*"\n# init --update: 1 recompile of one instance')
    assert "recompile_budget = 1\n\n[probe]\nsteps = 6\n" in after
    contract, findings = load(path)
    assert findings == [] and contract is not None and contract.regions[0].recompile_budget == 1
    assert not list(tmp_path.glob("snap-*.prom"))  # the recording exports nothing, whatever [monitor] says


def test_a_failing_update_leaves_the_file_untouched(contract_file: Path, capsys) -> None:
    before = contract_file.read_bytes()
    mtime = os.stat(contract_file).st_mtime_ns
    code = main(["init", "--update", "-o", str(contract_file), "--step", "tests.init.models:raising_step"])
    assert code == 2
    err = capsys.readouterr().err
    assert "raised ValueError: batch 1 is missing" in err and "tests/init/models.py:" in err
    assert contract_file.read_bytes() == before and os.stat(contract_file).st_mtime_ns == mtime
    assert [p.name for p in contract_file.parent.iterdir()] == [contract_file.name]


def test_update_needs_an_existing_file(tmp_path: Path, capsys) -> None:
    assert main(["init", "--update", "-o", str(tmp_path / "missing.toml")]) == 2
    assert "no such contract to update" in capsys.readouterr().err
