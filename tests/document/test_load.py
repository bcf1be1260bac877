"""Loading a contract: every problem at once, with codes, locations and fixes; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.document.load import ContractFileError, load, loads
from tests import ROOT as ROOT_DIR

GOOD = """
[contract]
name = "m"

[defaults]
backend = "eager"
recompile_budget = 2

[[region]]
name = "layers"
module = "layers.*"
dynamic = true

[[region]]
name = "head"
module = "head"
recompile_budget = 0
methods = ["forward", "decode_step"]
"""


def test_regions_inherit_defaults_and_override_them(write_contract) -> None:
    contract, findings = load(write_contract(GOOD))
    assert findings == []
    layers, head = contract.regions
    assert (layers.backend, layers.recompile_budget, layers.dynamic) == ("eager", 2, True)
    assert (head.recompile_budget, head.methods, head.dynamic) == (0, ("forward", "decode_step"), "auto")
    assert head.compile_kwargs() == {"backend": "eager", "fullgraph": False, "dynamic": None}


def test_a_typo_a_bad_type_and_a_missing_key_are_all_reported_with_locations(write_contract) -> None:
    text = GOOD.replace("dynamic = true", 'dynamic = "yes"\nrecompile_budjet = 1').replace(
        'module = "head"', "fullgraph = 1"
    )
    _, findings = load(write_contract(text))
    got = {(f.code, f.location) for f in findings}
    assert got == {
        ("CC001", "region[0].recompile_budjet"),
        ("CC003", "region[0].dynamic"),
        ("CC003", "region[1].fullgraph"),
        ("CC004", "region[1].module"),
    }
    typo = next(f for f in findings if f.code == "CC001")
    assert typo.fix == "did you mean recompile_budget?"


def test_a_region_with_one_bad_key_keeps_its_valid_keys(write_contract) -> None:
    contract, findings = load(write_contract(GOOD.replace("dynamic = true", "dynamic = true\nmode = 3")))
    assert [f.code for f in findings] == ["CC003"]
    assert contract.regions[0].dynamic is True and contract.regions[0].mode is None


def test_invalid_toml_reports_line_and_column(write_contract) -> None:
    path = write_contract('[contract]\nname = "m\n')
    contract, findings = load(path)
    assert contract is None
    assert findings[0].code == "CC002" and findings[0].location == f"{path}:2:10"


def test_binary_file_is_a_finding_not_a_crash(write_contract, tmp_path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b'[contract]\nname = "\xff\xfe"\n')
    _, findings = load(path)
    assert findings[0].code == "CC002" and findings[0].location.endswith(":2")


def test_missing_file_is_a_one_line_usage_error(tmp_path) -> None:
    with pytest.raises(ContractFileError, match="no such contract file"):
        load(tmp_path / "nope.toml")


def test_region_table_written_with_single_brackets_is_a_shape_error(write_contract) -> None:
    _, findings = load(write_contract('[contract]\nname = "m"\n[region]\nname = "a"\nmodule = ""\n'))
    assert [(f.code, f.location) for f in findings] == [("CC007", "region")]


def test_missing_contract_table_is_reported(write_contract) -> None:
    _, findings = load(write_contract('[[region]]\nname = "a"\nmodule = ""\n'))
    assert [(f.code, f.location) for f in findings] == [("CC004", "contract")]


def test_contract_paths_resolve_relative_to_the_contract_file(write_contract, tmp_path) -> None:
    contract, _ = load(write_contract(GOOD))
    assert contract.resolve_path("cache") == tmp_path / "cache"
    assert contract.resolve_path("/abs/x").as_posix() == "/abs/x"


def test_a_region_with_an_invalid_or_missing_name_still_reports_its_other_findings(write_contract) -> None:
    from torch import nn

    from contract.pipeline import check

    path = write_contract(
        '[contract]\nname = "m"\n'
        '[[region]]\nname = "bad name!"\nmodule = "nothing.*"\nbackend = "nope"\n'
        '[[region]]\nmodule = "0"\nenabled = false\n'
    )
    contract, _, findings = check(path, nn.Sequential(nn.Linear(2, 2)))
    assert {(f.code, f.location) for f in findings} == {
        ("CC003", "region[0].name"),
        ("CC501", "region[0].module"),
        ("CC101", "region[0].backend"),
        ("CC004", "region[1].name"),
        ("CC111", "region[1].reason"),
    }
    assert [r.name for r in contract.regions] == ["region[0]", "region[1]"]


def test_a_placeholder_name_never_collides_with_a_valid_region_name(write_contract) -> None:
    contract, findings = load(
        write_contract(
            '[contract]\nname = "m"\n[[region]]\nname = "9x"\nmodule = "a"\n[[region]]\nname = "_"\nmodule = "b"\n'
        )
    )
    assert [(f.code, f.location) for f in findings] == [("CC003", "region[0].name")]
    assert [r.name for r in contract.regions] == ["region[0]", "_"]


@pytest.mark.parametrize(
    "table, key, value, fix",
    [
        (
            "contract",
            "model",
            '"not a ref"',
            'write model = "package.module:attribute" (dotted import path, one colon, no spaces), e.g. "my_pkg.models:build"',
        ),
        ("contract", "torch", '"2.11"', 'write torch = ">=2.11" (or "==2.11.*" to pin that release)'),
        (
            "contract",
            "torch",
            '"two"',
            'write torch = ">=2.11": an operator before each version, commas between them (">=2.11,<2.14")',
        ),
        (
            "region",
            "name",
            '"bad name!"',
            'write name = "bad_name_" (a letter or _, then letters, digits, _ . : -; at most 64)',
        ),
        (
            "region",
            "module",
            '"layers/0"',
            'write module = "layers.0" (names from model.named_modules(); "*" one segment, "**" several, "" the root)',
        ),
        (
            "region",
            "methods",
            '["for ward"]',
            'write a Python identifier as the method or argument is spelled in the code, e.g. "for_ward"',
        ),
        ("region", "methods", "[]", 'list at least 1 item in methods, e.g. ["forward"]'),
        ("region", "dynamic", '"true"', "write dynamic = true, without quotes"),
        (
            "region",
            "dynamic",
            '"yes"',
            'write dynamic = true (every shape dynamic), false (static) or "auto" (dynamic after a shape change)',
        ),
        (
            "region",
            "dynamic_dims",
            '{ "1x" = [1] }',
            'write a Python identifier as the method or argument is spelled in the code, e.g. "_1x"',
        ),
        ("cache", "remote", '"http://h:6379"', 'write remote = "redis://host:6379" (rediss:// for TLS)'),
        ("contract", "name", '"' + "n" * 200 + '"', "shorten name to at most 128 characters"),
        ("region", "compile_seconds_budget", "0", "use a value > 0.0"),
        ("region", "compile_seconds_budget", '"30"', "write compile_seconds_budget as a number, without quotes"),
        ("cache", "require_warm", '"yes"', "write require_warm = true or false, without quotes"),
    ],
)
def test_every_invalid_value_gets_a_fix_saying_what_to_write(write_contract, table, key, value, fix) -> None:
    header = {
        "contract": "[contract]\n",
        "region": '[contract]\nname = "m"\n[[region]]\n',
        "cache": '[contract]\nname = "m"\n[cache]\n',
    }[table]
    body = {"contract": 'name = "m"\n', "region": 'name = "r"\nmodule = "a"\n', "cache": ""}[table]
    lines = [line for line in body.splitlines() if not line.startswith(f"{key} ")]
    _, findings = load(write_contract(header + "\n".join(lines) + f"\n{key} = {value}\n"))
    [finding] = findings
    assert finding.code == "CC003" and finding.fix == fix


def test_a_location_quotes_a_key_that_contains_a_dot() -> None:
    from contract.document.load import format_loc

    assert format_loc(("region", 2, "options", "triton.cudagraphs")) == 'region[2].options."triton.cudagraphs"'
    assert format_loc(("region", 2, "options", "max_autotune")) == "region[2].options.max_autotune"


def test_the_package_requires_the_python_and_pydantic_its_code_uses() -> None:
    import tomllib

    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT_DIR / "pyproject.toml").read_text())["project"]
    assert not SpecifierSet(project["requires-python"]).contains("3.10")  # tomllib is 3.11+
    pydantic = next(Requirement(d) for d in project["dependencies"] if Requirement(d).name == "pydantic")
    assert not pydantic.specifier.contains("2.6.4")  # ConfigDict(use_attribute_docstrings=True) is 2.7+


def test_loads_validates_text_as_the_file_it_names_without_reading_it(tmp_path: Path) -> None:
    """`loads(text, path)` gives what `load(path)` gives for the same bytes: the same findings with the same
    locations, and relative paths anchored at the named file's folder (which need not exist)."""
    text = '[contract]\nname = "t"\n[cache]\nmanifest = "warm.json"\n[[region]]\nname = "r"\nmodule = ""\nbogus = 1\n'
    file = tmp_path / "c.toml"
    file.write_text(text)
    from_file, found_file = load(file)
    from_text, found_text = loads(text, tmp_path / "elsewhere" / "c.toml")
    assert from_file is not None and from_text is not None
    assert [(f.code, f.location) for f in found_text] == [(f.code, f.location) for f in found_file] != []
    assert from_text.sha256 == from_file.sha256
    assert from_text.resolve_path("warm.json") == tmp_path / "elsewhere" / "warm.json"
    assert loads("[contract\n")[0] is None
