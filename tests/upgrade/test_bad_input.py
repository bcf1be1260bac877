"""Bad input to `compile-contract upgrade` is one line on stderr and exit 2, never a traceback: a candidate that is
missing, a directory, not runnable, not a Python, without torch, without this project or with another version or
source of it, that crashes on import or times out; a contract that cannot run; an unknown `--torch`.

The candidates are real interpreters where one can be made in a second (a bare venv, the suite's own python behind a
wrapper that shadows torch or the project's source); the two that would need another install of this project
(missing, another version) answer the probe as such an interpreter would (`contract.upgrade.interpreter._PROBE`)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import venv
from pathlib import Path

import pytest

from contract.cli import main
from contract.upgrade.interpreter import PACKAGES
from tests import ROOT
from tests.upgrade.models import contract

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def _caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's environment the interpreters inherit: this checkout first on the path, from the repo root."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


@pytest.fixture
def differing(tmp_path: Path) -> Path:
    path = tmp_path / "differing.toml"
    path.write_text(contract())
    return path


def upgrade(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:  # capsys or capfd
    """Run the command in-process; (exit code, stderr)."""
    code = main(["upgrade", *args])
    err = capsys.readouterr().err
    return code, err


def one_line(err: str) -> str:
    """The error: exactly one line, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


def script(path: Path, body: str) -> str:
    """An executable shell script."""
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def fake_probe(tmp_path: Path, **answer: object) -> str:
    """An interpreter answering the probe as one without this project, or with another version, would."""
    info = {"probe": 1, "python": "3.11.7", "executable": "/x/bin/python", "torch": "2.15.0", **answer}
    return script(tmp_path / "python", f"echo '{json.dumps(info)}'\n")


def test_a_missing_candidate(capsys, differing: Path, tmp_path: Path) -> None:
    code, err = upgrade(capsys, str(differing), "--candidate", str(tmp_path / "nope" / "python"))
    assert code == 2 and "no such file" in one_line(err) and "--torch VERSION" in err


def test_a_directory_as_candidate(capsys, differing: Path, tmp_path: Path) -> None:
    code, err = upgrade(capsys, str(differing), "--candidate", str(tmp_path))
    assert code == 2 and "is a directory" in one_line(err)


def test_a_file_that_cannot_run(capsys, differing: Path, tmp_path: Path) -> None:
    (tmp_path / "python").write_text("not a program")
    code, err = upgrade(capsys, str(differing), "--candidate", str(tmp_path / "python"))
    assert code == 2 and "cannot run it" in one_line(err)


def test_a_program_that_is_not_python(capsys, differing: Path) -> None:
    code, err = upgrade(capsys, str(differing), "--candidate", shutil.which("true") or "/bin/true")
    assert code == 2 and "not a Python interpreter" in one_line(err)


def test_a_python_without_torch(capsys, differing: Path, tmp_path: Path) -> None:
    venv.create(tmp_path / "bare", with_pip=False)
    code, err = upgrade(capsys, str(differing), "--candidate", str(tmp_path / "bare" / "bin" / "python"))
    assert code == 2 and "has no torch" in one_line(err)


def test_a_python_without_the_project(capsys, differing: Path, tmp_path: Path) -> None:
    python = fake_probe(tmp_path, project=None, packages={"contract": [], "monitor": []})
    code, err = upgrade(capsys, str(differing), "--candidate", python)
    line = one_line(err)
    assert code == 2 and "lacks torch-compile-contract" in line and f"pip install --no-deps -e {ROOT}" in line


def test_a_python_with_another_version_of_the_project(capsys, differing: Path, tmp_path: Path) -> None:
    pkgs = {name: [str(ROOT / name)] for name in PACKAGES}
    code, err = upgrade(capsys, str(differing), "--candidate", fake_probe(tmp_path, project="0.0.1", packages=pkgs))
    assert code == 2 and "has torch-compile-contract 0.0.1, this is 0.1.0" in one_line(err)


def test_a_python_importing_another_source_of_the_project(capsys, differing: Path, tmp_path: Path, monkeypatch) -> None:
    """The same version installed from another checkout (the editable install of a sibling worktree); run from
    outside the repository (run from its root, `python -m` imports the root's packages first)."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src"
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (src / "contract" / "demo.py").write_text((src / "contract" / "demo.py").read_text() + "\n# edited\n")
    python = script(tmp_path / "python", f'PYTHONPATH={src}:{ROOT} exec {sys.executable} "$@"\n')
    code, err = upgrade(capsys, str(differing), "--candidate", python)
    line = one_line(err)
    assert code == 2 and f"imports torch-compile-contract from {src / 'contract'}" in line and "source differs" in line


def shadow_torch(tmp_path: Path, body: str) -> str:
    """The suite's python with a `torch` package of `body` first on its path (torch's metadata still installed)."""
    (tmp_path / "shadow" / "torch").mkdir(parents=True)
    (tmp_path / "shadow" / "torch" / "__init__.py").write_text(body)
    return script(tmp_path / "python", f'PYTHONPATH={tmp_path / "shadow"}:{ROOT} exec {sys.executable} "$@"\n')


def test_a_candidate_that_crashes_on_import_shows_its_stderr_tail(capsys, differing: Path, tmp_path: Path) -> None:
    python = shadow_torch(tmp_path, "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    code, err = upgrade(capsys, str(differing), "--candidate", python)
    line = one_line(err)
    assert code == 2 and "crashes on import (exit 1)" in line and "libtorch_cpu.so: cannot open" in line


def test_a_candidate_that_hangs_times_out_and_is_killed(capsys, differing: Path, tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    python = shadow_torch(
        tmp_path, f"import os, time\nopen({str(pid)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    started = time.monotonic()
    code, err = upgrade(capsys, str(differing), "--candidate", python, "--timeout", "8")
    assert code == 2 and "timed out after 8 s" in one_line(err) and "--timeout" in err
    assert time.monotonic() - started < 60
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)


def test_a_contract_that_is_missing_or_has_no_step(capsys, tmp_path: Path) -> None:
    code, err = upgrade(capsys, str(tmp_path / "missing.toml"), "--candidate", sys.executable)
    assert code == 2 and "missing.toml" in one_line(err)
    no_step = tmp_path / "no-step.toml"
    no_step.write_text(contract().replace('step = "tests.upgrade.models:step"\n', ""))
    code, err = upgrade(capsys, str(no_step), "--candidate", sys.executable)
    assert code == 2 and "pass --step or set [contract] step" in one_line(err)


def test_a_step_that_fails_under_the_installed_torch(capsys, tmp_path: Path) -> None:
    """The baseline must run: the same python as candidate, so no other torch is needed."""
    path = tmp_path / "broken.toml"
    path.write_text(contract(step_ref="tests.upgrade.models:step_always_fails"))
    code, err = upgrade(capsys, str(path), "--candidate", sys.executable, "--steps", "2")
    line = one_line(err)
    assert code == 2 and "the step fails under the installed torch" in line and "RuntimeError: broken step" in line


def test_an_unknown_torch_version_names_the_locks_there_are(capfd, differing: Path) -> None:
    """The script's own message (on the inherited stderr, as it prints its progress), then ours."""
    code, err = upgrade(capfd, str(differing), "--torch", "9.9.9")
    assert code == 2 and "no requirements/torch-9.9.9.lock" in err and "2.15.0" in err
    assert (
        err.strip().splitlines()[-1].startswith("compile-contract: error: scripts/torch-env.sh 9.9.9 failed (exit 2)")
    )
    code, err = upgrade(capfd, str(differing), "--torch", "latest")
    assert code == 2 and "expected a version like 2.15.0" in one_line(err)
