"""PyTorch's portable cache artifacts: `warm` saves them, `enforce` loads them before anything compiles.

`torch.compiler.load_cache_artifacts()` says what it wrote into the caches, never what will hit later; a load that
raised, wrote nothing, or wrote fewer keys than the manifest recorded is a CC707 finding (the entry check, CC705,
then sees what really is on disk).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from contract.checks.warm.manifest import ManifestError, read
from contract.checks.warm.rules import ARTIFACTS_NOT_LOADED
from contract.findings import Finding

MAX_BYTES = 8 << 30
"""Artifacts larger than this are not read (a wrong path, not a cache)."""


def load(contract: Any) -> list[Finding]:
    """Load `[cache] artifacts` into the caches (enforce, before the checks and apply); CC707 when it fails."""
    spec = contract.cache
    if not spec.artifacts:
        return []
    path = Path(contract.resolve_path(spec.artifacts))
    if not path.is_file():
        return []  # the check reports the missing file (check and doctor see it too)
    try:
        data = _read(path)
        from contract import _torch

        wrote = _torch.load_cache_artifacts(data)
    except Exception as exc:  # a corrupted or foreign file makes torch raise anything
        return [_failed(path, f"loading it raised {type(exc).__name__}: {str(exc)[:200]}")]
    if not wrote or not any(wrote.values()):
        return [_failed(path, "torch.compiler.load_cache_artifacts() wrote nothing into the caches")]
    return _coverage(contract, path, wrote)


def _read(path: Path) -> bytes:
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES >> 30} GiB")
    return path.read_bytes()


def _failed(path: Path, why: str) -> Finding:
    return ARTIFACTS_NOT_LOADED.finding(
        "cache.artifacts",
        f"cache artifacts {path} were not loaded: {why}; this start compiles cold where the local cache is empty",
        "run `compile-contract warm CONTRACT` with this torch to save them again, and ship the new file",
    )


def _coverage(contract: Any, path: Path, wrote: dict[str, list[str]]) -> list[Finding]:
    """The FX-graph and AOTAutograd keys the manifest recorded that the load did not write."""
    if not contract.cache.manifest:
        return []
    try:
        manifest = read(contract.resolve_path(contract.cache.manifest))
    except ManifestError:
        return []  # the check reports it
    written = {k for keys in wrote.values() for k in keys}
    recorded = {key for _, key, _ in manifest.keys()}
    absent = recorded - written
    if not absent:
        return []
    return [
        _failed(
            path,
            f"they hold {len(recorded) - len(absent)} of the {len(recorded)} keys the manifest recorded "
            f"(missing e.g. {sorted(absent)[0]})",
        )
    ]


def save(contract: Any) -> dict[str, Any] | None:
    """Save the artifacts of everything compiled in this process to `[cache] artifacts` (atomic); what was saved."""
    if not contract.cache.artifacts:
        return None
    from contract import _torch

    saved = _torch.save_cache_artifacts()
    if saved is None:
        return None
    data, keys = saved
    path = Path(contract.resolve_path(contract.cache.artifacts))
    _write_atomic(path, data)
    return {
        "path": contract.cache.artifacts,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "keys": keys,
    }


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # shipped to other hosts and users: readable like any file written without mkstemp
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
