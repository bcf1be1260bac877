"""Property-based fuzzing of contract documents: every input ends in findings or a one-line exit 2, never a traceback.

Run with `-s` to see how many cases each property tried (the counts go into the issue's closing note).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.cli import main
from contract.document.load import MAX_BYTES, MAX_NESTING, ContractFileError, load
from contract.document.schema import MAX_REGIONS, SECTIONS
from contract.findings import Finding
from contract.pipeline import check
from tests import ROOT
from tests.reliability import _toml

MODEL = "contract.demo:build_model"
STEP = "tests.reliability.test_contract_fuzz:noop_step"
CASES: Counter[str] = Counter()
FUZZ = settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FUZZ_CLI = settings(FUZZ, max_examples=150)

RICH = """\
# every table of the schema, valid
[contract]
name = "fuzz-base"
model = "contract.demo:build_model"
step = "contract.demo:step"
torch = ">=2.11"
description = "décodeur — ünïcode"

[defaults]
backend = "eager"
recompile_budget = 1
graph_break_budget = 0
on_breach = "alert"
dynamic = "auto"
options = { "max_autotune" = false }

[[region]]
name = "layers"
module = "layers.*"
methods = ["forward"]
dynamic = false
dynamic_dims = { x = [0, 1] }
warmup_compiles = 2

[[region]]
name = "lm_head"
module = "lm_head"
enabled = false
reason = "kept eager while we investigate"

[cache]
dir = "cache/inductor"
min_free_gib = 0.5
min_free_inodes = 100
fx_graph_cache = true
remote = "redis://127.0.0.1:1"

[monitor]
addr = "127.0.0.1"
port = 0
snapshot_path = "snap-{rank}.prom"
push_timeout_s = 0.5
log_format = "json"

[probe]
steps = 4
backend = "eager"

[[allow]]
code = "CC501"
where = "region[0].*"
reason = "layers are built lazily"
"""

HOSTILE = [
    "",
    " ",
    "auto",
    "eager",
    "inductor",
    "forward",
    "layers.*",
    "**",
    "*",
    "lm_head",
    "alert",
    "fail",
    MODEL,
    "contract.demo:step",
    ">=2.11",
    ">=99",
    "redis://127.0.0.1:1",
    "rediss://x",
    "127.0.0.1",
    "0.0.0.0",
    "__import__('os').system('touch /tmp/pwned')",
    "$(touch /tmp/pwned)",
    "`id`",
    "../../../../etc/passwd",
    "/etc/shadow",
    "a\nb",
    "a\r\nb",
    "\u2028",
    "quote\"s 'and' \\back",
    "\x00",
    "\x1b[31mred",
    "{rank}",
    "x" * 5000,
    "CC001",
    "CC9999",
    "a" * 64,
    "a" * 65,
    "é" * 100,
]


def noop_step(model, i) -> None:
    """A harmless step for the CLI runs (fuzzed documents may name any step; the CLI flag overrides it)."""


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    """Print how many cases each property tried (visible with `pytest -s`)."""
    yield
    total = sum(CASES.values())
    print(f"\ncontract fuzz cases tried: {total} " + json.dumps(dict(sorted(CASES.items()))))


# ---- strategies ------------------------------------------------------------------------------------------------

utc = dt.UTC
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(-3, 70),
    st.floats(),
    st.text(max_size=40),
    st.sampled_from(HOSTILE),
    st.datetimes(timezones=st.sampled_from([None, utc])),
    st.dates(),
    st.times(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
any_key = st.one_of(st.text(max_size=12), st.sampled_from(HOSTILE[:20]))


def table_of(section: str) -> st.SearchStrategy[dict]:
    """A table with the section's real keys (and some unknown ones) holding random values."""
    keys = st.one_of(st.sampled_from(list(SECTIONS[section].model_fields)), any_key)
    return st.dictionaries(keys, values, max_size=8)


def section_value(section: str) -> st.SearchStrategy:
    """Mostly the right shape for the section, sometimes any value."""
    table = table_of(section)
    right = st.lists(table, max_size=4) if section in ("region", "allow") else table
    return st.one_of(right, right, values)


random_documents = st.dictionaries(
    st.one_of(st.sampled_from(list(SECTIONS)), any_key),
    st.just(None),
    max_size=8,
).flatmap(lambda d: st.fixed_dictionaries({k: section_value(k) if k in SECTIONS else values for k in d}))


@st.composite
def mutated_documents(draw) -> dict:
    """A valid document with random keys overwritten, deleted or added, so fuzzing reaches binding."""
    import tomllib

    doc = tomllib.loads(RICH)
    for _ in range(draw(st.integers(1, 6))):
        section = draw(st.sampled_from(list(doc)))
        table = doc[section]
        if isinstance(table, list):
            table = table[draw(st.integers(0, len(table) - 1))] if table else {}
        key = draw(st.one_of(st.sampled_from(list(SECTIONS[section].model_fields)), any_key))
        if draw(st.booleans()) and key in table:
            del table[key]
        else:
            table[key] = draw(values)
    return doc


def assert_well_formed(findings: list[Finding]) -> None:
    """Each finding: a code, a severity and a non-empty, bounded, one-line location, message and fix."""
    for f in findings:
        assert isinstance(f, Finding) and f.code.startswith("CC") and f.severity in ("error", "warning"), f
        for text in (f.location, f.message, f.fix):
            assert text.strip(), f
            assert len(text.splitlines()) == 1, f"not one line: {text!r}"
            assert len(text) <= 600, f"unbounded: {len(text)} chars in {f.code}"


def check_load(path: Path, kind: str) -> list[Finding]:
    """The loader's property: findings (a None contract only with an error finding) or ContractFileError."""
    CASES[kind] += 1
    try:
        contract, findings = load(path)
    except ContractFileError as exc:
        assert len(str(exc).splitlines()) == 1 and str(exc).strip()
        return []
    assert_well_formed(findings)
    if contract is None:
        assert any(f.severity == "error" for f in findings), "unparsed document without an error finding"
    _, _, checked = check(path, None)
    assert_well_formed(checked)
    return findings


def run_cli(path: Path, kind: str, fmt: str = "json") -> tuple[int, str, str]:
    """`compile-contract check` in-process: exit 0/1 with well-formed findings, or 2 with one stderr line."""
    CASES[kind] += 1
    out, err = io.StringIO(), io.StringIO()
    saved = list(sys.path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["check", str(path), "--model", MODEL, "--step", STEP, "--format", fmt])
    finally:
        sys.path[:] = saved
    stdout, stderr = out.getvalue(), err.getvalue()
    assert "Traceback" not in stdout + stderr
    assert rc in (0, 1, 2), rc
    if rc == 2:
        assert stdout == "" and len(stderr.splitlines()) == 1 and stderr.startswith("compile-contract: error: ")
    elif fmt == "json":
        report = json.loads(stdout)
        assert report["ok"] is (rc == 0)
        assert_well_formed([Finding(**f) for f in report["findings"]])
    else:
        assert stdout.startswith("contract check ")
    return rc, stdout, stderr


# ---- properties ------------------------------------------------------------------------------------------------


@FUZZ
@given(doc=st.one_of(random_documents, mutated_documents()))
def test_random_schema_documents_load_to_well_formed_findings(doc: dict, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(_toml.document(doc), encoding="utf-8")
    check_load(path, "load_random_document")


@FUZZ
@given(data=st.binary(max_size=4096))
def test_random_bytes_load_to_well_formed_findings(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(data)
    check_load(path, "load_random_bytes")


@FUZZ
@given(cut=st.integers(0, len(RICH.encode())), tail=st.binary(max_size=8))
def test_truncated_valid_documents_load_to_well_formed_findings(cut: int, tail: bytes, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(RICH.encode()[:cut] + tail)
    check_load(path, "load_truncated")


@FUZZ
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(RICH)),
            st.sampled_from(
                [
                    "[",
                    "]",
                    "[[",
                    '"',
                    "'",
                    "=",
                    "\n",
                    "{",
                    "}",
                    ",",
                    ".",
                    "\\",
                    '"""',
                    "'''",
                    "#",
                    "\x00",
                    "\t",
                    "\ufeff",
                    "-1",
                    "inf",
                    "1979-05-27",
                    "true",
                ]
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_valid_documents_with_inserted_tokens_load_to_well_formed_findings(edits, tmp_path: Path) -> None:
    text = RICH
    for pos, token in edits:
        text = text[:pos] + token + text[pos:]
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    check_load(path, "load_inserted_tokens")


@FUZZ_CLI
@given(doc=st.one_of(mutated_documents(), random_documents))
def test_cli_check_on_random_documents_exits_with_findings_or_one_line(doc: dict, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(_toml.document(doc), encoding="utf-8")
    run_cli(path, "cli_random_document")


@FUZZ_CLI
@given(data=st.one_of(st.binary(max_size=512), st.integers(0, len(RICH)).map(lambda n: RICH[:n].encode())))
def test_cli_check_on_bytes_and_truncations_exits_with_findings_or_one_line(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(data)
    run_cli(path, "cli_bytes_or_truncated", fmt="text")


def test_the_rich_base_document_is_valid_so_mutations_start_from_a_clean_state(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(RICH)
    contract, findings = load(path)
    assert findings == [] and [r.name for r in contract.regions] == ["layers", "lm_head"]


# ---- the deterministic extremes --------------------------------------------------------------------------------


def nested(kind: str, depth: int) -> str:
    """Documents nested `depth` levels deep in each way TOML allows."""
    if kind == "arrays":
        return '[contract]\nname = "n"\n[defaults]\noptions = { x = ' + "[" * depth + "]" * depth + " }\n"
    if kind == "inline_tables":
        return "[defaults]\noptions = " + "{ a = " * depth + "1" + " }" * depth + "\n"
    if kind == "headers":
        return "[" + ".".join(["a"] * depth) + "]\nx = 1\n"
    return ".".join(["a"] * depth) + " = 1\n"


@pytest.mark.parametrize("depth", [10, 40, 200, 900, 5_000, 100_000])
@pytest.mark.parametrize("kind", ["arrays", "inline_tables", "headers", "dotted_keys"])
def test_deeply_nested_documents_give_findings_not_recursion_errors(kind: str, depth: int, tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(nested(kind, depth))
    findings = check_load(path, "deep_nesting")
    errors = any(f.severity == "error" for f in findings)
    too_deep = any(f.code == "CC002" for f in findings)
    assert too_deep == (depth > MAX_NESTING)  # the same verdict whatever the recursion limit (Inductor raises it)
    assert run_cli(path, "deep_nesting_cli")[0] == (1 if errors else 0)


def test_nesting_verdict_does_not_depend_on_the_recursion_limit_inductor_raises(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(nested("arrays", 900))
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(4000)  # what an Inductor compile leaves behind is 2000; tomllib then parses 900 levels
    try:
        _, findings = load(path)
    finally:
        sys.setrecursionlimit(before)
    assert [f.code for f in findings] == ["CC002"] and "nested more than" in findings[0].message


@pytest.mark.parametrize("size", [MAX_BYTES + 1, 3 * MAX_BYTES])
def test_documents_over_one_mebibyte_are_refused_with_cc006(size: int, tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    body = RICH.encode()
    path.write_bytes(body + b"#" * (size - len(body)))
    findings = check_load(path, "huge_file")
    assert [f.code for f in findings] == ["CC006"] and findings[0].location == str(path)
    assert run_cli(path, "huge_file_cli")[0] == 1


def test_a_document_of_exactly_one_mebibyte_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    body = RICH.encode()
    path.write_bytes(body + b"#" * (MAX_BYTES - len(body)))
    assert check_load(path, "huge_file") == []


def regions(n: int) -> str:
    return '[contract]\nname = "many"\n' + "".join(f'[[region]]\nname = "r{i}"\nmodule = "m{i}"\n' for i in range(n))


def test_ten_thousand_regions_give_the_cc006_limit_finding(tmp_path: Path) -> None:
    path = tmp_path / "many.toml"
    path.write_text(regions(10_000))
    findings = check_load(path, "many_regions")
    assert [(f.code, f.location) for f in findings] == [("CC006", "region")]
    assert f"limit {MAX_REGIONS}" in findings[0].message
    rc, out, _ = run_cli(path, "many_regions_cli")
    assert rc == 1 and "CC006" in out


def test_the_region_limit_is_inclusive(tmp_path: Path) -> None:
    path = tmp_path / "many.toml"
    path.write_text(regions(MAX_REGIONS))
    assert check_load(path, "many_regions") == []
    path.write_text(regions(MAX_REGIONS + 1))
    assert [f.code for f in check_load(path, "many_regions")] == ["CC006"]


def test_a_megabyte_value_in_any_key_stays_a_bounded_finding(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    blob = _toml.string("x\n'\"" * 40_000)
    path.write_text(f"[contract]\nname = {blob}\n[[region]]\nname = {blob}\nmodule = {blob}\n{blob} = 1\n")
    codes = sorted(f.code for f in check_load(path, "megabyte_values"))
    assert codes == ["CC001", "CC003", "CC003", "CC003"]


@pytest.mark.parametrize("make", ["missing", "directory", "unreadable", "fifo_like_binary"])
def test_unreadable_paths_end_in_exit_2_with_one_line(make: str, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    if make == "directory":
        path.mkdir()
    elif make == "unreadable":
        path.write_text(RICH)
        path.chmod(0)
        if os.access(path, os.R_OK):
            pytest.skip("root reads a file with mode 000")
    elif make == "fifo_like_binary":
        path.write_bytes(bytes(range(256)) * 64)
    rc, _, err = run_cli(path, "unreadable_path_cli")
    assert rc == (1 if make == "fifo_like_binary" else 2)
    if rc == 2:
        assert str(path) in err


SUBPROCESS_CASES = {
    "random_bytes": bytes(range(256)) * 16,
    "truncated": RICH.encode()[: len(RICH) // 2],
    "deep_arrays": nested("arrays", 50_000).encode(),
    "ten_thousand_regions": regions(10_000).encode(),
    "huge": b"#" * (MAX_BYTES + 10),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SUBPROCESS_CASES))
def test_the_real_cli_process_never_prints_a_traceback(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_bytes(SUBPROCESS_CASES[name])
    CASES["cli_subprocess"] += 1
    proc = subprocess.run(
        [sys.executable, "-m", "contract.cli", "check", str(path), "--model", MODEL],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 1 and proc.stdout.startswith("contract check failed")
