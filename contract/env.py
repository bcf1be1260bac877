"""The environment as it was before torch's compiler was imported, and torch's own cache defaults, without torch.

`import torch._dynamo` reads the Inductor cache variables once and writes a default `TORCHINDUCTOR_CACHE_DIR` back
into `os.environ`; a snapshot taken earlier tells a user's value from torch's. This module never imports torch, so
`compile-contract doctor` stays fast.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType

TESTED_TORCH: tuple[tuple[int, int], tuple[int, int]] = ((2, 11), (2, 15))
"""The torch minors this release is tested on, first and last (the CI matrix: `requirements/*.lock`). The one place
the range is written: pyproject.toml's `torch` requirement is `torch_range_specifier()`
(tests/checks/settings/test_tested_torch.py holds them together); the startup checks report a torch outside it (CC112)."""
CACHE_DIR_VAR = "TORCHINDUCTOR_CACHE_DIR"
COMPILER_MODULES = ("torch._dynamo", "torch._inductor.config", "torch._functorch.config")
"""Modules whose import reads the cache variables (any one of them means "too late to set them")."""


@dataclass(frozen=True, kw_only=True)
class EnvSnapshot:
    """A copy of the environment and whether torch's compiler had already read it."""

    environ: Mapping[str, str] = field(default_factory=dict)
    """`os.environ` at snapshot time (read-only copy)."""
    compiler_imported: bool = False
    """True when `torch._dynamo` (or the Inductor/functorch config) was imported before the snapshot."""

    def user_value(self, name: str) -> str | None:
        """A variable's value as the user set it; torch's own default cache dir written back counts as unset."""
        value = self.environ.get(name)
        if (
            name == CACHE_DIR_VAR
            and value is not None
            and self.compiler_imported
            and os.path.abspath(value) == default_cache_dir()
        ):
            return None
        return value


def take_snapshot(environ: Mapping[str, str] | None = None, modules: Mapping[str, object] | None = None) -> EnvSnapshot:
    """Copy the environment now and record whether the compiler modules were already imported."""
    env = dict(os.environ if environ is None else environ)
    mods = sys.modules if modules is None else modules
    return EnvSnapshot(environ=MappingProxyType(env), compiler_imported=any(m in mods for m in COMPILER_MODULES))


def compiler_imported(modules: Mapping[str, object] | None = None) -> bool:
    """Whether torch's compiler config is loaded in this process now (the cache variables were read)."""
    mods = sys.modules if modules is None else modules
    return "torch._inductor.config" in mods and "torch._functorch.config" in mods


def default_cache_dir() -> str:
    """torch's default Inductor cache dir, `<tempdir>/torchinductor_<user>` (mirrors `cache_dir_utils`, 2.11-2.13)."""
    try:
        username = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        username = f"uid_{os.getuid()}"
    return os.path.abspath(
        os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", username))
    )


def torch_version() -> str | None:
    """Installed torch version from package metadata (no import, so doctor stays fast); None if not installed."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def torch_range_text() -> str:
    """The tested range as users read it: `2.11 to 2.15`."""
    (a, b), (c, d) = TESTED_TORCH
    return f"{a}.{b} to {c}.{d}"


def torch_range_specifier() -> str:
    """The tested range as a requirement: `>=2.11,<2.16` (pyproject.toml's, and what pip installs)."""
    (a, b), (c, d) = TESTED_TORCH
    return f">={a}.{b},<{c}.{d + 1}"


def is_tested_torch(version: str) -> bool | None:
    """Whether an installed torch version is of a tested minor; None when it is not a version (PEP 440) at all.

    The minor decides: a local build (`2.15.0+cu132`), a release candidate or a nightly of a tested minor
    (`2.15.0rc1`, `2.15.0.dev20260101`) is that minor's code; a nightly of the next minor (`2.16.0.dev...`) is not.
    """
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(version).release
    except InvalidVersion:
        return None
    first, last = TESTED_TORCH
    return first <= (release + (0,))[:2] <= last
