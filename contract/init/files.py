"""Writing contracts safely: all or nothing (temp file + rename in the same directory), and the diff of a change."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from contract.init.build import InitError


def atomic_write(path: Path, text: str, *, overwrite: bool) -> None:
    """Write `text` to `path` through a temp file renamed over it: a reader never sees half a file, and a failure
    leaves the old file (or none) in place. The old file's permissions are kept."""
    if path.exists() and not overwrite:
        raise InitError(f"{path}: already exists; pass --update to re-record it, or --force to replace it")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InitError(f"{path}: directory {parent} does not exist; create it first")
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise InitError(f"{path}: cannot write the contract ({exc.strerror or exc}); nothing was written") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: str) -> None:
    """Best-effort cleanup of a temp file."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def unified_diff(old: str, new: str, path: str) -> str:
    """`diff -u` of the contract before and after."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{path.lstrip('/')}",
            tofile=f"b/{path.lstrip('/')}",
        )
    )
