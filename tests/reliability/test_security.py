"""Security: a contract is data. It never runs code except the `model`/`step` callables it names; its paths resolve
relative to the contract file; hostile strings stay bounded, one-line findings."""

from __future__ import annotations

import ast
import contextlib
import io
import sys
from pathlib import Path

import pytest

from contract.cli import main
from contract.demo import build_model
from contract.document.load import load
from contract.pipeline import check
from tests import ROOT
from tests.reliability import _toml

PACKAGES = ("contract", "monitor", "compile_formats")
SENTINEL_MODULE = "ccsec_sentinel_module"


def sources() -> list[Path]:
    """Every Python file of the shipped packages."""
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def dangerous_calls(path: Path) -> list[str]:
    """`file:line what` for eval/exec/compile/__import__, os.system/popen/exec*, and any call with shell=True."""
    tree = ast.parse(path.read_text(), filename=str(path))
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        builtin = isinstance(func, ast.Name) or owner == "builtins"
        bad = (
            builtin
            and name in ("eval", "exec", "compile", "__import__")
            or owner == "os"
            and (name in ("system", "popen") or name.startswith(("exec", "spawn")))
            or owner == "pickle"
            and name in ("load", "loads")
            or any(
                k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                for k in node.keywords
            )
        )
        if bad:
            hits.append(f"{path.relative_to(ROOT)}:{node.lineno} {owner + '.' if owner else ''}{name}")
    return hits


def test_the_shipped_packages_contain_no_eval_exec_shell_or_pickle_calls() -> None:
    files = sources()
    assert any(p.parent.name == "contract" for p in files)
    assert [hit for p in files for hit in dangerous_calls(p)] == []


def test_the_source_scan_does_flag_each_dangerous_call(tmp_path: Path, monkeypatch) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os, subprocess, pickle\neval('1')\nexec('x=1')\nos.system('id')\n"
        "subprocess.run('id', shell=True)\npickle.loads(b'')\n__import__('os')\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [h.split(" ")[1] for h in dangerous_calls(bad)] == [
        "eval",
        "exec",
        "os.system",
        "subprocess.run",
        "pickle.loads",
        "__import__",
    ]


FIXED_NAME_IMPORTERS = {
    "contract/__init__.py": "its own submodules for the lazy exports (a literal table)",
    "contract/_torch.py": "torch's own config modules (a literal table)",
    "contract/_torch_scan.py": "torch's own is_compiling()/is_scripting() aliases (a literal list)",
}
"""Modules that import by a name from a literal table in their own source, never from the contract or the CLI."""


def test_only_refs_imports_modules_by_a_name_from_the_contract() -> None:
    importers = {
        str(p.relative_to(ROOT))
        for p in sources()
        if "import_module(" in p.read_text() or "importlib.util.spec_from" in p.read_text()
    }
    assert importers == {"contract/document/refs.py", *FIXED_NAME_IMPORTERS}


@pytest.fixture
def sentinel(tmp_path: Path, monkeypatch) -> Path:
    """An importable module that leaves a marker file when imported and another when its callable runs."""
    pkg = tmp_path / "importable"
    pkg.mkdir()
    marker = tmp_path / "marker"
    (pkg / f"{SENTINEL_MODULE}.py").write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r} + '.imported').touch()\n"
        "def build():\n"
        f"    Path({str(marker)!r} + '.called').touch()\n"
        "    from contract.demo import build_model\n"
        "    return build_model()\n"
    )
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.delitem(sys.modules, SENTINEL_MODULE, raising=False)
    yield marker
    sys.modules.pop(SENTINEL_MODULE, None)


def marks(marker: Path) -> set[str]:
    return {p.suffix for p in marker.parent.glob(marker.name + ".*")}


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = list(sys.path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    finally:
        sys.path[:] = saved
    return rc, out.getvalue(), err.getvalue()


SENTINEL_CONTRACT = f"""
[contract]
name = "s"
model = "{SENTINEL_MODULE}:build"
step = "{SENTINEL_MODULE}:build"

[[region]]
name = "layers"
module = "layers.*"
backend = "eager"
"""


def test_loading_and_checking_a_contract_never_imports_the_callables_it_names(tmp_path: Path, sentinel: Path) -> None:
    path = write(tmp_path, SENTINEL_CONTRACT)
    contract, findings = load(path)
    assert findings == [] and contract.meta.model == f"{SENTINEL_MODULE}:build"
    check(path, None)
    check(path, build_model())
    assert marks(sentinel) == set() and SENTINEL_MODULE not in sys.modules


def test_the_cli_runs_the_named_model_only_when_no_flag_overrides_it(tmp_path: Path, sentinel: Path) -> None:
    path = write(tmp_path, SENTINEL_CONTRACT)
    rc, _, _ = cli("check", str(path), "--model", "contract.demo:build_model", "--step", "contract.demo:step")
    assert rc == 0 and marks(sentinel) == set()
    rc, out, err = cli("check", str(path))
    assert rc == 0, out + err
    assert marks(sentinel) == {".imported", ".called"}


CODE_STRINGS = [
    "__import__('os').system('touch {m}')",
    "$(touch {m})",
    "`touch {m}`",
    "; touch {m} #",
    "{{m}}{{__import__}}",
    "eval(\"open('{m}','w')\")",
]


@pytest.mark.parametrize("payload", CODE_STRINGS)
def test_code_in_every_string_value_stays_data(payload: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    s = _toml.string(payload.format(m=marker))
    path = write(
        tmp_path,
        f"""
[contract]
name = {s}
description = {s}
torch = {s}
model = {s}
[defaults]
backend = {s}
mode = {s}
options = {{ {s} = {s} }}
[[region]]
name = {s}
module = {s}
reason = {s}
methods = [{s}]
[[region]]
name = "layers"
module = "layers.*"
backend = "eager"
enabled = false
reason = {s}
[cache]
dir = {s}
remote = {s}
[monitor]
addr = {s}
snapshot_path = {s}
pushgateway = {s}
tls_cert = {s}
[probe]
backend = {s}
[[allow]]
code = "CC001"
where = {s}
reason = {s}
""",
    )
    load(path)
    check(path, build_model())
    rc, out, err = cli("check", str(path), "--model", "contract.demo:build_model", "--step", "contract.demo:step")
    assert rc == 1 and "Traceback" not in out + err
    assert not marker.exists()


def test_relative_paths_resolve_against_the_contract_file_not_the_working_directory(
    tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "deploy" / "contracts"
    home.mkdir(parents=True)
    path = write(home, '[contract]\nname = "p"\n[cache]\ndir = "../cache/inductor"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    contract, _ = load(Path("..") / "deploy" / "contracts" / "c.toml")
    assert contract.path.is_absolute() and contract.path.resolve() == path
    assert contract.resolve_path(contract.cache.dir) == tmp_path / "deploy" / "cache" / "inductor"
    assert contract.resolve_path("../../../../../../../../etc/passwd") == Path("/etc/passwd")
    assert contract.resolve_path("/abs/dir") == Path("/abs/dir")


HOSTILE_NAMES = ["a\"b'c", "line\nbreak", "tab\tand\u2028sep", "x" * 200_000, "r\x00z", "\x1b[2J"]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=["quotes", "newline", "separators", "200k_chars", "nul", "ansi"])
def test_hostile_region_names_give_one_bounded_line_per_finding(name: str, tmp_path: Path) -> None:
    s = _toml.string(name)
    path = write(
        tmp_path,
        f'[contract]\nname = "h"\n[[region]]\nname = {s}\nmodule = "layers.*"\n'
        f'reason = {s}\n[[region]]\nname = "ok"\nmodule = {s}\n'
        f'[[allow]]\ncode = "CC001"\nwhere = {s}\nreason = {s}\n',
    )
    contract, binding, findings = check(path, build_model())
    assert {f.code for f in findings} >= {"CC003"}
    for f in findings:
        for text in (f.location, f.message, f.fix):
            assert len(text.splitlines()) == 1 and len(text) <= 600, (f.code, len(text))
    assert all(r.name in ("ok",) or len(r.name) <= 64 for r in contract.regions)


def test_region_names_that_reach_metrics_are_short_and_plain(tmp_path: Path) -> None:
    from contract.document.schema import _REGION_NAME

    for name in HOSTILE_NAMES + ["a" * 65, "1abc", "é"]:
        assert not _REGION_NAME.match(name), name
    assert _REGION_NAME.match("model.layers:attn-0")
