"""Loading a contract: every problem at once, with codes, locations and fixes; never a traceback."""
from __future__ import annotations

import pytest

from contract.load import ContractFileError, load

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
        'module = "head"', "fullgraph = 1")
    _, findings = load(write_contract(text))
    got = {(f.code, f.location) for f in findings}
    assert got == {("CC001", "region[0].recompile_budjet"), ("CC003", "region[0].dynamic"),
                   ("CC003", "region[1].fullgraph"), ("CC004", "region[1].module")}
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
    path.write_bytes(b"[contract]\nname = \"\xff\xfe\"\n")
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
