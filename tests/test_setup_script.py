"""scripts/setup.sh on a Debian without python3-venv: installs it as root, else says how in one line.

The script runs for real in a scratch copy of the repo; only `python3`, `apt-get` and `id` are stand-ins on PATH
(a real apt-get would change this machine, and the real python here has venv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import ROOT

FAKE_PYTHON = """#!/bin/bash
# python3 without ensurepip until the fake apt-get installed python3.11-venv
case "$*" in
    *"import ensurepip"*) [ -e "$STATE/venv-installed" ] ;;
    *"sys.version_info"*) echo 3.11 ;;
    "-m venv .venv") mkdir -p .venv/bin && printf '#!/bin/sh\\necho "$*" >> "$STATE/venv-python.log"\\n' > .venv/bin/python \\
        && chmod +x .venv/bin/python ;;
    *) exit 1 ;;
esac
"""
FAKE_APT = """#!/bin/bash
echo "$*" >> "$STATE/apt.log"
case "$*" in *"install"*) touch "$STATE/venv-installed" ;; esac
"""


def run_setup(
    tmp_path: Path, uid: int, args: list[str] | None = None, venv: bool = False
) -> subprocess.CompletedProcess:
    """Run a copy of scripts/setup.sh with the stand-ins first on PATH and `id -u` answering `uid` (`venv`: with
    python3-venv already installed)."""
    repo, bin_dir, state = tmp_path / "repo", tmp_path / "bin", tmp_path / "state"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    shutil.copytree(ROOT / "requirements", repo / "requirements")
    bin_dir.mkdir()
    state.mkdir()
    if venv:
        (state / "venv-installed").touch()
    for name, text in {"python3": FAKE_PYTHON, "apt-get": FAKE_APT, "id": f"#!/bin/sh\necho {uid}\n"}.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "STATE": str(state)}
    env.pop("PYTHON", None)
    return subprocess.run(
        ["bash", str(repo / "scripts" / "setup.sh"), *(args or [])], env=env, capture_output=True, text=True, timeout=60
    )


def test_as_root_setup_installs_the_missing_venv_package_with_apt_and_goes_on(tmp_path: Path) -> None:
    if not os.path.exists("/usr/sbin/policy-rc.d") and os.geteuid() != 0:
        pytest.skip("the root path writes /usr/sbin/policy-rc.d, which only root can create")
    res = run_setup(tmp_path, uid=0)
    assert res.returncode == 0, res.stderr
    apt = (tmp_path / "state" / "apt.log").read_text().splitlines()
    assert apt[0] == "update -qq" and apt[1].startswith("install") and apt[1].endswith("python3.11-venv")
    installs = (tmp_path / "state" / "venv-python.log").read_text()
    assert "--require-hashes --no-deps -r requirements/base.lock" in installs


def test_setup_installs_from_a_lock_that_pins_the_cpu_wheel_of_torch_with_its_hash() -> None:
    """Both locks the two commands install pin torch 2.13.0+cpu, and every package in them carries a sha256."""
    for lock in ("base", "test"):
        text = (ROOT / "requirements" / f"{lock}.lock").read_text()
        pins = [line for line in text.splitlines() if "==" in line and not line.startswith((" ", "#"))]
        assert "torch==2.13.0+cpu \\" in pins and all(pin.endswith(" \\") for pin in pins), lock
        assert text.count("--hash=sha256:") >= len(pins)


def test_a_lock_for_missing_extras_is_one_line_that_names_the_locked_ones(tmp_path: Path) -> None:
    res = run_setup(tmp_path, uid=1000, args=["docs"], venv=True)
    assert res.returncode == 2
    assert (
        res.stderr
        == "setup: no lock for extras 'docs' (requirements/docs.lock); locked: base, test. Add one with scripts/lock.sh\n"
    )


def test_without_root_setup_prints_a_one_line_fix_and_installs_nothing(tmp_path: Path) -> None:
    res = run_setup(tmp_path, uid=1000)
    assert res.returncode == 1 and not (tmp_path / "state" / "apt.log").exists()
    assert res.stderr == (
        "setup: python3 -m venv is unavailable; run: sudo apt-get install -y python3.11-venv (or python3-venv)\n"
    )
