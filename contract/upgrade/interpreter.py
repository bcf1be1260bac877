"""The interpreters `upgrade` runs under: find the candidate (or create it with `scripts/torch-env.sh`), vet it, and
run the worker in it. Every failure is one `BadInput` line with a fix, never a traceback.

Vetting runs a tiny probe in the interpreter, with the caller's environment and working directory (as the worker
will run), that imports nothing: its Python, the torch and project versions from package metadata, and where the
`contract` and `monitor` packages would import from. The candidate must run *this* project: same version, and the
same source (a digest of the two packages' `.py` files), or the two runs would compare two programs, not two
torches. Importing torch is left to the worker (once per interpreter, seconds each): it marks that its imports
succeeded (`imported` in its directory), so a worker that dies before the mark crashed on import.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.upgrade import BadInput

PROJECT = "torch-compile-contract"
PACKAGES = ("contract", "monitor", "compile_formats")
TAIL = 600
"""Characters of a failing process's stderr quoted in the error line."""
_PROBE = """\
import importlib.metadata as m, importlib.util as u, json, sys
def v(d):
    try:
        return m.version(d)
    except m.PackageNotFoundError:
        return None
def where(n):
    s = u.find_spec(n)
    return list(s.submodule_search_locations or [])[:1] if s else []
print(json.dumps({"probe": 1, "python": sys.version.split()[0], "executable": sys.executable, "torch": v("torch"),
    "project": v("torch-compile-contract"), "packages": {n: where(n) for n in ("contract", "monitor", "compile_formats")}}))
"""
"""Run with `python -c` in the interpreter; imports nothing of torch or of this project (names: PROJECT, PACKAGES)."""


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    """A vetted interpreter: it runs this project over some torch."""

    python: str
    torch: str
    project: str


@dataclass(frozen=True, kw_only=True)
class Ran:
    """A finished subprocess."""

    returncode: int
    stdout: str
    stderr: str


def locate(candidate: str) -> str:
    """The candidate's path: as given, or found on PATH; BadInput when there is no such file."""
    path = Path(candidate).expanduser()
    if os.sep not in candidate and not path.exists():
        found = shutil.which(candidate)
        if found:
            return found
    if not path.exists():
        raise BadInput(
            f"--candidate {candidate}: no such file; pass the python of an environment with the candidate torch and "
            "this project installed (e.g. .venv-2.15/bin/python), or --torch VERSION to create one"
        )
    if path.is_dir():
        raise BadInput(f"--candidate {candidate}: is a directory; pass its python (e.g. {path / 'bin' / 'python'})")
    return str(path.absolute())


def create(version: str) -> str:
    """The python of the cached environment `scripts/torch-env.sh VERSION` makes from `requirements/torch-VERSION.lock`
    (the project's own mechanism; a first run downloads torch). Its progress goes to stderr as it runs."""
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise BadInput(f"--torch {version!r}: expected a version like 2.15.0")
    script = project_root() / "scripts" / "torch-env.sh"
    if not script.is_file():
        raise BadInput(
            f"--torch needs this project's source checkout ({script} is missing in an installed copy); create the "
            "environment yourself and pass --candidate PYTHON"
        )
    proc = subprocess.run(["bash", str(script), version], stdout=subprocess.PIPE, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise BadInput(f"scripts/torch-env.sh {version} failed (exit {proc.returncode}); its messages are above")
    return lines[-1]


def project_root() -> Path:
    """The directory holding the `contract` package (a source checkout has `scripts/` and `pyproject.toml` there)."""
    return Path(__file__).resolve().parents[2]


def vet(python: str, label: str, timeout: float) -> Interpreter:
    """Probe the interpreter: a Python, with torch, with this very project."""
    ran = run([python, "-c", _PROBE], timeout, f"{label} {python}", "probing it")
    lines = ran.stdout.splitlines()
    info = _json(lines[0]) if lines and ran.returncode == 0 else None
    if not info or info.get("probe") != 1:
        raise BadInput(f"{label} {python}: not a Python interpreter this can use (3.11+){_tail(ran.stderr, ': ')}")
    if not info.get("torch"):
        raise BadInput(
            f"{label} {python}: has no torch; install the candidate torch into it: {python} -m pip install torch==VERSION"
        )
    _same_project(python, label, info)
    return Interpreter(python=python, torch=str(info["torch"]), project=str(info["project"]))


def _same_project(python: str, label: str, info: dict[str, Any]) -> None:
    """The interpreter imports this project: installed, the same version, the same source."""
    from importlib import metadata

    ours = metadata.version(PROJECT)
    install = f"{python} -m pip install --no-deps -e {project_root()}"
    if not info.get("project") or not all(info.get("packages", {}).get(p) for p in PACKAGES):
        raise BadInput(f"{label} {python}: lacks {PROJECT}; install this project into it: {install}")
    if info["project"] != ours:
        raise BadInput(
            f"{label} {python}: has {PROJECT} {info['project']}, this is {ours}; install this one: {install}"
        )
    theirs = {p: Path(info["packages"][p][0]) for p in PACKAGES}
    if source_digest(theirs) != source_digest(own_packages()):
        where = ", ".join(str(d) for d in theirs.values())
        raise BadInput(
            f"{label} {python}: imports {PROJECT} from {where}, whose source differs from this one's "
            f"({project_root()}); install this checkout into it: {install} (or set PYTHONPATH={project_root()})"
        )


def own_packages() -> dict[str, Path]:
    """Where this process imports the project's packages from."""
    import importlib.util

    out = {"contract": Path(__file__).resolve().parents[1]}
    for name in PACKAGES[1:]:
        spec = importlib.util.find_spec(name)
        out[name] = Path(next(iter(spec.submodule_search_locations or [""]))) if spec else Path()
    return out


def source_digest(packages: dict[str, Path]) -> str:
    """sha256 over every `.py` file of the packages (relative path and bytes): the same digest, the same code."""
    h = hashlib.sha256()
    for name, root in sorted(packages.items()):
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                h.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
                h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def run_worker(python: str, label: str, args: list[str], out: Path, timeout: float) -> dict[str, Any]:
    """Run the worker in `python` with `args`, writing into `out`; its `result.json` as data."""
    ran = run(
        [python, "-m", "contract.upgrade.worker", *args, "--out", str(out)],
        timeout,
        f"{label} {python}",
        "running the step",
    )
    if ran.returncode == 2:
        raise BadInput(_tail(ran.stderr) or f"the worker under {label} refused the input")
    if ran.returncode != 0 and not (out / "imported").exists():
        raise BadInput(f"{label} {python}: crashes on import (exit {ran.returncode}){_tail(ran.stderr, ': ')}")
    result = _json((out / "result.json").read_text(encoding="utf-8")) if (out / "result.json").is_file() else None
    if ran.returncode != 0 or result is None:
        raise BadInput(f"the run under {label} {python} failed (exit {ran.returncode}){_tail(ran.stderr, ': ')}")
    from contract.upgrade.worker import FORMAT

    if result.get("format") != FORMAT:
        raise BadInput(
            f"the run under {label} {python} wrote result format {result.get('format')!r}, expected {FORMAT}"
        )
    return result


def run(cmd: list[str], timeout: float, who: str, doing: str) -> Ran:
    """Run with the caller's environment and working directory, in its own session: on a timeout or an interrupt
    the whole process group is killed (a compile worker of it included)."""
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True
        )
    except OSError as exc:
        raise BadInput(f"{who}: cannot run it ({exc.strerror or exc}): not a Python interpreter") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise BadInput(f"{who}: timed out after {timeout:g} s {doing}; raise --timeout if it is only slow") from None
    except BaseException:
        _kill(proc)
        raise
    return Ran(returncode=proc.returncode, stdout=out, stderr=err)


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process group this command started, and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def _json(text: str) -> dict[str, Any] | None:
    """A JSON object, or None for anything else (a program that is not our probe or worker)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _tail(stderr: str, lead: str = "") -> str:
    """The end of a process's stderr, folded to one bounded line (what the error line quotes)."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    text = " | ".join(lines[-4:])
    text = text if len(text) <= TAIL else "..." + text[-TAIL:]
    return f"{lead}{text}" if text else ""


def current() -> str:
    """The installed torch's interpreter: this one."""
    return sys.executable
