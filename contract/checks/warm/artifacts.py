"""PyTorch's portable cache artifacts: `enforce` loads them before anything compiles (`monitor.warm` saves them).

`torch.compiler.load_cache_artifacts()` says what it wrote into the caches, never what will hit later; a load that
raised, wrote nothing, or wrote fewer keys than the manifest recorded is a CC707 finding (the entry check, CC705,
then sees what really is on disk). Torch's own warnings and tracebacks about a failed load are captured into that
finding, never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compile_formats.manifest import ManifestError, read
from contract.checks.cache.artifacts import Inspection, inspect
from contract.checks.warm.rules import ARTIFACTS_NOT_LOADED
from contract.findings import Finding


def load(contract: Any, *, strict: bool = False, found: Inspection | None = None) -> list[Finding]:
    """Load `[cache] artifacts` into the caches (enforce, before the checks and apply); CC707 when torch fails.

    Only bytes that passed the checks are loaded (owner and mode, the pin, the container: `cache.artifacts`, or the
    inspection enforce already made); a file that did not is left unread or unloaded, and the checks that run next
    report why (as in check and doctor)."""
    found = inspect(contract, strict=strict) if found is None else found
    if found.data is None or found.path is None:
        return []
    from contract import _caches

    wrote, problem = _caches.load_cache_artifacts_quietly(found.data)
    if problem is not None:
        return [_failed(found.path, problem)]
    if not wrote or not any(wrote.values()):
        return [_failed(found.path, "torch.compiler.load_cache_artifacts() wrote nothing into the caches")]
    return _coverage(contract, found.path, wrote)


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
