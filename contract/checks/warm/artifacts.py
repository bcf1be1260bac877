"""PyTorch's portable cache artifacts: `enforce` loads them before anything compiles (`monitor.warm` saves them).

`torch.compiler.load_cache_artifacts()` says what it wrote into the caches, never what will hit later; a load that
raised, wrote nothing, or wrote fewer keys than the manifest recorded is a CC707 finding (the entry check, CC705,
then sees what really is on disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract.checks.warm.rules import ARTIFACTS_NOT_LOADED
from contract.findings import Finding
from monitor.manifest import ManifestError, read

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
        from contract import _caches

        wrote = _caches.load_cache_artifacts(data)
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
