"""Inputs the contract fuzzer found crashing or malformed, kept as regression tests (one per fix)."""

from __future__ import annotations

from pathlib import Path

from contract.document.load import load


def test_an_empty_top_level_key_is_reported_at_a_quoted_non_empty_location(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('"" = []\n[contract]\nname = "n"\n')
    _, findings = load(path)
    assert [(f.code, f.location) for f in findings] == [("CC001", '""')]


def test_a_key_with_newlines_and_quotes_is_reported_on_one_escaped_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[contract]\nname = "n"\n"a\\nb\\u2028\\"c" = 1\n')
    _, findings = load(path)
    assert [(f.code, f.location) for f in findings] == [("CC001", 'contract."a\\nb\\u2028\\"c"')]


def test_a_megabyte_key_is_cut_in_the_location(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[contract]\nname = "n"\n"' + "k" * 500_000 + '" = 1\n')
    _, findings = load(path)
    assert len(findings) == 1 and len(findings[0].location) < 80


def test_an_allow_entry_without_a_code_is_reported_and_does_not_crash_the_check(tmp_path: Path) -> None:
    from contract.pipeline import check

    path = tmp_path / "c.toml"
    path.write_text('[contract]\nname = "n"\n[[allow]]\nwhere = "region[0].*"\nreason = "r"\n')
    contract, _, findings = check(path, None)
    assert contract.allow == ()
    assert [(f.code, f.location) for f in findings] == [("CC004", "allow[0].code")]


def test_a_dotted_key_of_100000_parts_is_refused_at_once_instead_of_parsing_for_minutes(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[contract]\nname = "n"\n' + ".".join(["a"] * 100_000) + " = 1\n")
    contract, findings = load(path)
    assert contract is None
    assert [(f.code, f.location) for f in findings] == [("CC002", f"{path}:3")]


def test_a_deep_table_header_is_refused_but_dots_in_strings_comments_and_floats_are_not(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[" + ".".join(["a"] * 150) + "]\n")
    assert [f.code for f in load(path)[1]] == ["CC002"]
    path.write_text(
        "# " + "." * 500 + '\n[contract]\nname = "n"\ndescription = """\n' + "a." * 500 + '\n"""\n'
        "[defaults]\noptions = { x = [" + ", ".join(["1.5"] * 500) + "] }\n"
    )
    assert load(path)[1] == []
