"""The predicted first start per region under each torch, from the warm manifest when the contract has one.

Every cache key Inductor and AOTAutograd compute includes the torch version, so a start on another torch than the
manifest was written with is certainly cold (CC703), and costs what the manifest recorded for the region. Without a
manifest the candidate's first start is cold all the same; its recorded compile seconds are the estimate.
"""

from __future__ import annotations

from typing import Any

from contract.upgrade.compare import ColdStart, RegionRun


def read_manifest(contract: Any) -> tuple[Any, str]:
    """(the manifest, "") or (None, why there is none)."""
    from compile_formats.manifest import ManifestError, read

    name = contract.cache.manifest
    if not name:
        return None, "no [cache] manifest"
    try:
        return read(contract.resolve_path(name)), ""
    except ManifestError as exc:
        return None, f"warm manifest {name} unusable ({exc})"


def predict(
    manifest: Any, missing: str, torch: str, region: str, run: RegionRun | None, *, candidate: bool
) -> ColdStart | None:
    """One side's first start for one region (None: nothing to say, the current torch without a manifest)."""
    if manifest is None:
        if not candidate:
            return None
        seconds = run.compile_seconds if run else None
        return ColdStart(
            cold=True,
            seconds=seconds,
            why=f"{missing}; a torch change changes every cache key (estimate: this run's compile time)",
        )
    cost = manifest.cost([region]).seconds
    recorded = str(manifest.environment.get("torch") or "")
    if recorded and recorded != torch:
        return ColdStart(
            cold=True,
            seconds=cost,
            why=f"the manifest was written with torch {recorded}: every cache key changes (CC703)",
        )
    return ColdStart(
        cold=False,
        seconds=cost,
        why=f"the manifest was written with torch {recorded or torch} (other CC7xx findings aside)",
    )
