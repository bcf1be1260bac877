"""CC112: a torch outside the tested range is a warning of `check`, `enforce` and `doctor`; the range is written once
(contract/env.py) and pyproject.toml's torch requirement and the CI matrix agree with it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from torch import nn

import contract.env
from contract.checks.settings.check import check_tested_torch
from contract.env import TESTED_TORCH, is_tested_torch, torch_range_specifier, torch_range_text
from contract.pipeline import ContractViolation, check, enforce
from tests import ROOT
from tests.report.test_catalog import EXAMPLES, expected_codes

EXAMPLE = EXAMPLES / "CC112_untested_torch.toml"
CLI = str(Path(sys.executable).parent / "compile-contract")


def test_pyproject_requires_exactly_the_tested_range() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    [torch] = [Requirement(d) for d in deps if Requirement(d).name == "torch"]
    assert torch.specifier == SpecifierSet(torch_range_specifier()) == SpecifierSet(">=2.11,<2.16")
    assert torch_range_text() == "2.11 to 2.15"


def test_the_tested_range_is_the_ci_matrix_of_torch_locks() -> None:
    pins = [
        m for p in (ROOT / "requirements").glob("*.lock") for m in re.findall(r"^torch==(\S+)", p.read_text(), re.M)
    ]
    minors = sorted({Version(v).release[:2] for v in pins})
    assert (minors[0], minors[-1]) == TESTED_TORCH, pins
    assert all(is_tested_torch(v) for v in pins)


@pytest.mark.parametrize(
    "version",
    ["2.11.0", "2.11.0rc1", "2.12.1", "2.13.0+cpu", "2.14.1", "2.15.0", "2.15.0+cu132", "2.15.1", "2.15.0.dev20260101"],
)
def test_a_build_of_a_tested_minor_is_tested(version: str) -> None:
    assert is_tested_torch(version) is True
    assert check_tested_torch(version) == []


@pytest.mark.parametrize("version", ["2.10.2", "2.16.0", "2.16.0.dev20260301+cu132", "3.0.0"])
def test_a_torch_outside_the_range_is_a_warning_naming_the_range_the_version_and_the_fix(version: str) -> None:
    [f] = check_tested_torch(version)
    assert (f.code, f.severity, f.location) == ("CC112", "warning", f"torch=={version}")
    assert f"torch {version} is outside the tested range (torch 2.11 to 2.15)" in f.message
    minor = ".".join(version.split(".")[:2])
    assert f.fix == (
        'install a tested torch: pip install "torch>=2.11,<2.16" (or, once validated on it: '
        f'[[allow]] code = "CC112", where = "torch=={minor}.*", reason = "...")'
    )


def test_a_version_that_is_not_pep_440_is_untested() -> None:
    assert is_tested_torch("nightly") is None
    [f] = check_tested_torch("nightly")
    assert f.location == "torch==nightly" and 'where = "torch==nightly"' in f.fix


def test_explain_prints_the_rule_with_the_range_and_the_fix(capsys) -> None:
    from contract.cli import main

    assert main(["explain", "CC112"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CC112 untested-torch (warning)\n") and "torch 2.11 to 2.15" in out
    assert 'pip install "torch>=2.11,<2.16"' in out and 'where = "torch==2.16.*"' in out


def test_no_torch_installed_is_not_this_rules_finding(monkeypatch) -> None:
    monkeypatch.setattr(contract.env, "torch_version", lambda: None)
    assert check_tested_torch() == []


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_the_example_is_exactly_its_marked_finding_on_an_untested_torch(monkeypatch) -> None:
    monkeypatch.setattr(contract.env, "torch_version", lambda: "2.16.0")
    _, binding, findings = check(EXAMPLE, Net())
    assert binding is not None and {f.code for f in findings} == set(expected_codes(EXAMPLE)) == {"CC112"}
    monkeypatch.setattr(contract.env, "torch_version", lambda: "2.15.0+cu132")
    assert check(EXAMPLE, Net())[2] == []


def test_enforce_starts_on_an_untested_torch_and_strict_refuses_it(monkeypatch) -> None:
    monkeypatch.setattr(contract.env, "torch_version", lambda: "2.16.0")
    assert enforce(Net(), EXAMPLE) is not None
    with pytest.raises(ContractViolation) as exc:
        enforce(Net(), EXAMPLE, strict=True)
    assert [(f.code, f.severity) for f in exc.value.findings] == [("CC112", "error")]


def test_an_allow_entry_for_the_validated_minor_silences_it(monkeypatch, write_contract) -> None:
    path = write_contract(
        EXAMPLE.read_text()
        + '\n[[allow]]\ncode = "CC112"\nwhere = "torch==2.16.*"\nreason = "validated on 2.16.0 in staging"\n'
    )
    monkeypatch.setattr(contract.env, "torch_version", lambda: "2.16.0+cu132")
    assert check(path, Net())[2] == []
    monkeypatch.setattr(contract.env, "torch_version", lambda: "2.17.0")  # the next untested minor warns again
    assert sorted(f.code for f in check(path, Net())[2]) == ["CC008", "CC112"]  # CC008: the entry is unused now


@pytest.fixture
def torch_2_16(tmp_path: Path) -> dict[str, str]:
    """An environment whose torch package metadata says 2.16.0 (a dist-info first on sys.path; the torch it imports
    is still the installed one)."""
    meta = tmp_path / "meta" / "torch-2.16.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.16.0\n")
    path = os.pathsep.join(p for p in (str(meta.parent), str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}
    return {**env, "PYTHONPATH": path}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_doctor_warns_about_an_untested_torch_and_strict_refuses_it(torch_2_16) -> None:
    res = cli(torch_2_16, "doctor", "--format", "json")
    assert res.returncode == 0, res.stderr
    [f] = json.loads(res.stdout)["findings"]
    assert (f["code"], f["severity"], f["location"]) == ("CC112", "warning", "torch==2.16.0")
    text = cli(torch_2_16, "doctor")
    assert text.returncode == 0 and "torch==2.16.0: CC112 " in text.stdout, text.stdout
    assert cli(torch_2_16, "doctor", "--strict").returncode == 1


def test_check_warns_about_an_untested_torch(torch_2_16) -> None:
    res = cli(torch_2_16, "check", "contracts/demo.toml", "--format", "json")
    assert res.returncode == 0, res.stdout + res.stderr
    assert [(f["code"], f["location"]) for f in json.loads(res.stdout)["findings"]] == [("CC112", "torch==2.16.0")]
