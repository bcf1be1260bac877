"""No module of ours can shadow an installed package, whichever folder of the repository lands on `sys.path`.

transformers 5.25 imports the `kernels` package; `examples/kernels.py` once shadowed it for every test that put
`examples/` on `sys.path`, and every Hugging Face test in that worker failed to import transformers.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

from tests import ROOT

OURS = "torch-compile-contract"
IMPORT_ROOTS = (ROOT, ROOT / "examples", ROOT / "bench")
"""Folders whose modules can be imported by their bare name: the repository root (pytest's rootdir, the CLI's
working directory), and the folder of a script run as `python examples/x.py` or `python bench/x.py`."""


def top_level_names(folder: Path) -> set[str]:
    """The names `import NAME` finds in `folder`: packages (a folder with `__init__.py`) and modules."""
    packages = {p.parent.name for p in folder.glob("*/__init__.py")}
    return packages | {p.stem for p in folder.glob("*.py")}


def installed_names() -> set[str]:
    """Top-level import names of every installed distribution but this project."""
    return {
        name
        for name, dists in importlib.metadata.packages_distributions().items()
        if OURS not in dists and not name.startswith("_")
    }


def test_no_module_in_a_folder_on_sys_path_is_named_like_an_installed_package() -> None:
    installed = installed_names()
    clashes = {str(f.relative_to(ROOT) or "."): sorted(top_level_names(f) & installed) for f in IMPORT_ROOTS}
    assert not any(clashes.values()), f"rename these modules (prefix them): {clashes}"


def test_examples_are_scenario_modules_imported_through_the_examples_package() -> None:
    """Every example module is `scenario*`, and nothing inserts `examples/` itself into `sys.path`."""
    assert all(p.stem.startswith("scenario") for p in (ROOT / "examples").glob("*.py") if p.stem != "__init__")
    inserts = re.compile(r"sys\.path\.(insert|append)\(.*examples")
    for path in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("examples/*.py"), *ROOT.glob("bench/*.py")]:
        assert not inserts.search(path.read_text()), path


def test_the_shared_formats_import_neither_package_nor_torch() -> None:
    """compile_formats sits below contract/ and monitor/: importing it pulls in neither of them, nor torch."""
    code = (
        "import sys, compile_formats.manifest, compile_formats.fingerprint, compile_formats.reasons; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('contract', 'monitor', 'torch')); "
        "assert not bad, bad"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
