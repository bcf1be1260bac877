"""PyTorch's portable cache artifacts: `enforce` loads them before anything compiles (`contract.warm.run` saves them).

Where the warm manifest says its precompiled bundle was verified with the installed torch (`precompile.verified`,
`contract.warm.precompile`), `enforce` switches torch's `caching_precompile` on first, so every region's `torch.compile()`
installs Dynamo's saved code instead of tracing; where the manifest has a verdict that is not for this torch or not
verified, it switches it off (a `TORCH_CACHING_PRECOMPILE=1` exported by hand included): entries that crashed or missed
in the verification must not be run.

`torch.compiler.load_cache_artifacts()` says what it wrote into the caches, never what will hit later; a load that
raised, wrote nothing, or wrote fewer keys than the manifest recorded is a CC707 finding (the entry check, CC705,
then sees what really is on disk). Torch's own warnings and tracebacks about a failed load are captured into that
finding, never printed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from compile_formats.manifest import ManifestError, read
from contract.checks.cache.artifacts import Inspection, inspect
from contract.checks.warm.rules import ARTIFACTS_NOT_LOADED
from contract.document.load import Contract
from contract.findings import Finding


def load(contract: Contract, *, strict: bool = False, found: Inspection | None = None) -> list[Finding]:
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


def precompile_wanted(contract: Contract, found: Inspection) -> bool | None:
    """Whether this start runs torch's `caching_precompile`: True where the manifest verified its bundle with this
    torch and the artifacts passed their checks (so they load), False where a verdict says otherwise, None (leave
    torch's setting) where there is no verdict to go by."""
    if not contract.cache.artifacts or not contract.cache.manifest:
        return None
    try:
        manifest = read(contract.resolve_path(contract.cache.manifest))
    except ManifestError:
        return None  # the check reports it
    if manifest.precompile is None:
        return None
    import torch

    return found.data is not None and manifest.precompile_verified(str(torch.__version__))


@contextlib.contextmanager
def precompile_paused() -> Iterator[None]:
    """Precompile off while the checks run (the probe compiles the model with its own backend: no entry of the bundle
    may be installed there), as it was after."""
    from contract import _caches

    was = _caches.caching_precompile()
    _caches.set_caching_precompile(False)
    try:
        yield
    finally:
        _caches.set_caching_precompile(was)


def switch_precompile(wanted: bool | None) -> None:
    """Set torch's `caching_precompile` to `wanted` before apply (None: leave it)."""
    if wanted is not None:
        from contract import _caches

        _caches.set_caching_precompile(wanted)


def _failed(path: Path, why: str) -> Finding:
    return ARTIFACTS_NOT_LOADED.finding(
        "cache.artifacts",
        f"cache artifacts {path} were not loaded: {why}; this start compiles cold where the local cache is empty",
        "run `compile-contract warm CONTRACT` with this torch to save them again, and ship the new file",
    )


def _coverage(contract: Contract, path: Path, wrote: dict[str, list[str]]) -> list[Finding]:
    """The FX-graph and AOTAutograd keys the manifest recorded that the load did not write. A precompiled bundle's
    AOTAutograd entries are the bundled ones of its second pass, under other keys (torch's load keeps the last section
    of each artifact type, `CacheArtifactManager.deserialize`), so there only the FX-graph keys are compared."""
    if not contract.cache.manifest:
        return []
    try:
        manifest = read(contract.resolve_path(contract.cache.manifest))
    except ManifestError:
        return []  # the check reports it
    written = {k for keys in wrote.values() for k in keys}
    bundled = bool(wrote.get("precompile"))
    recorded = {key for cache, key, _ in manifest.keys() if not (bundled and cache == "aot_autograd")}
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
