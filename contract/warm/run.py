"""`compile-contract warm CONTRACT`: compile every region with its real settings and write the warm manifest.

The run is an engine start under the monitor: apply the contract (its real backend, not the probe's), run `step`
until every region has compiled and one more step compiles nothing new (bounded), with the monitor recording each
compile's cache lookups per region instance. Then it saves PyTorch's portable cache artifacts (`[cache] artifacts`),
tries a precompiled bundle in their place where the CLI gave it the model's references (`contract.warm.precompile`: built,
then verified in a fresh process; kept only if it held), and writes the manifest atomically (`[cache] manifest`): the
recorded keys and compile seconds, the environment fingerprint the keys depend on, the PGO state, each region's code
and settings hashes, and the precompile verdict.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compile_formats import fingerprint
from compile_formats import manifest as mf
from contract.binding.targets import Binding
from contract.document.load import Contract


class WarmError(Exception):
    """The warm run cannot start or finish: one line with the fix."""


@dataclass(kw_only=True)
class WarmResult:
    """What the warm run wrote."""

    path: str
    """The manifest written."""
    steps: int
    """Steps run."""
    compiled: list[str] = field(default_factory=list)
    """Regions that compiled."""
    never: list[str] = field(default_factory=list)
    """Enabled regions with targets that never compiled in the steps run (the manifest has no keys for them)."""
    compiles: int = 0
    """Compiles recorded."""
    cold_seconds: float = 0.0
    """Their cold compile seconds."""
    artifacts: dict[str, Any] | None = None
    """The saved artifacts (path, bytes, keys), if configured."""
    caches_off: list[str] = field(default_factory=list)
    """Inductor caches that were off during the run (their keys could not be recorded)."""
    precompile: dict[str, Any] | None = None
    """The precompile verdict written into the manifest (`verified`, `torch`, `reason`, ...), None: not tried."""
    kernels: dict[str, Any] | None = None
    """The C++ kernel pack written beside the artifacts on CPU (path, bytes, sha256, files, host), None: none."""


def cache_dir_env(contract: Contract, environ: dict[str, str] | Any = os.environ) -> None:
    """Make torch use `[cache] dir` (call before torch's compiler is imported); a different exported dir is an error."""
    if not contract.cache.dir:
        return
    wanted = str(contract.resolve_path(contract.cache.dir))
    now = environ.get("TORCHINDUCTOR_CACHE_DIR")
    if now is None:
        environ["TORCHINDUCTOR_CACHE_DIR"] = wanted
    elif os.path.realpath(now) != os.path.realpath(wanted):
        raise WarmError(
            f"TORCHINDUCTOR_CACHE_DIR={now} differs from [cache] dir {wanted}; export the contract's dir (or unset it)"
        )


def run(
    binding: Binding,
    step: Callable[[Any, int], Any],
    *,
    steps: int,
    logger: Any = None,
    refs: tuple[str, str, str] | None = None,
    precompile: bool = True,
) -> WarmResult:
    """Apply, run the steps under a recording monitor, save artifacts (a verified precompiled bundle where `refs`
    names the contract, model and step a fresh process can rebuild, and `precompile`), write the manifest."""
    from contract.binding.apply import apply
    from monitor.runtime import Monitor

    contract = binding.contract
    if not contract.cache.manifest:
        raise WarmError('[cache] has no manifest; set manifest = "warm-manifest.json" (relative to the contract)')
    apply(binding)
    mon = Monitor(binding, serve=False, logger=logger, record_keys=True)
    started = time.perf_counter()
    try:
        done = _steps(binding, mon, step, steps)
    finally:
        mon.stop()
    seconds = time.perf_counter() - started
    regions, shared = mon.cold.recorded()
    snap = mon.snapshot()
    wanted = [n for n, rb in binding.regions.items() if rb.region.enabled and rb.targets]
    saved = save_artifacts(contract)
    verdict = None
    if saved is not None and refs is not None:
        compiled = {n for n in wanted if snap[n]["compiles"]}
        verdict, saved = _precompiled(binding, step, done, refs, seconds, compiled, saved, on=precompile)
    kernels = _kernels(contract) if saved is not None else None
    data = build(binding, regions, shared, saved, verdict, kernels)
    path = contract.resolve_path(contract.cache.manifest)
    mf.write(path, data)
    manifest = mf.Manifest(data, path)
    cost = manifest.cost()
    return WarmResult(
        path=str(path),
        steps=done,
        compiled=[n for n in wanted if snap[n]["compiles"]],
        never=[n for n in wanted if not snap[n]["compiles"]],
        compiles=cost.compiles,
        cold_seconds=cost.seconds,
        artifacts=saved,
        caches_off=[c for c in ("fx_graph_cache", "autograd_cache") if not data["cache"][c]],
        precompile=verdict,
        kernels=kernels,
    )


def _kernels(contract: Contract) -> dict[str, Any] | None:
    """The C++ kernels this run loaded, packed beside `[cache] artifacts` (`contract.warm.kernels`; CPU only)."""
    from contract import _caches
    from contract.warm import kernels

    return kernels.save(contract, _caches.inductor_cache_dir(), mf.write_atomic)


def _precompiled(
    binding: Binding,
    step: Callable[[Any, int], Any],
    steps: int,
    refs: tuple[str, str, str],
    seconds: float,
    compiled: set[str],
    saved: dict[str, Any],
    *,
    on: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The precompile verdict, and what `[cache] artifacts` now holds: the verified bundle, else the plain artifacts
    already written."""
    from contract.warm import precompile

    if not on:
        why = "not tried (warm --no-precompile)"
        return precompile.verdict(verified=False, torch=precompile.torch_version(), reason=why), saved
    verdict, bundle = precompile.attempt(binding, step, steps=steps, refs=refs, warm_seconds=seconds, expected=compiled)
    if bundle is None:
        return verdict, saved
    return verdict, write_artifacts(binding.contract, *bundle)


def _steps(binding: Binding, mon: Any, step: Callable[[Any, int], Any], steps: int) -> int:
    """Run `step(model, i)` until every enabled region compiled and a step compiled nothing new (at most `steps`)."""
    wanted = [n for n, rb in binding.regions.items() if rb.region.enabled and rb.targets]
    before = -1
    for i in range(steps):
        step(binding.model, i)
        snap = mon.snapshot()
        total = sum(s["compiles"] + s["backward_compiles"] for s in snap.values())
        if all(snap[n]["compiles"] for n in wanted) and total == before:
            return i + 1
        before = total
    return steps


def build(
    binding: Binding,
    regions: dict[str, Any],
    shared: dict[str, Any],
    saved: dict[str, Any] | None,
    precompile: dict[str, Any] | None = None,
    kernels: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest's JSON data (field reference: docs/topics/warm-starts.md, "Warm manifest")."""
    from contract import _caches

    contract = binding.contract
    environment = fingerprint.full_environment(os.environ)
    environment["cpu_threads_in_key"] = "cpp_runtime_thread_count" in shared.get("fx_graph", {})
    switches = _caches.cache_switches()
    hashes = fingerprint.region_fingerprints(binding)
    data: dict[str, Any] = {
        "version": mf.VERSION,
        "written_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "contract": {"name": contract.name, "sha256": contract.sha256},
        "environment": environment,
        "cache": {
            "dir": _caches.inductor_cache_dir(),
            "fx_graph_cache": switches["fx_graph_cache"] and not switches["force_disable_caches"],
            "autograd_cache": switches["autograd_cache"] and not switches["force_disable_caches"],
            "remote": switches["fx_graph_remote_cache"],
        },
        "pgo": _caches.pgo_state(),
        "artifacts": saved,
        "precompile": precompile,
        "kernels": kernels,
        "components": shared,
        "regions": {
            name: {**hashes[name], "instances": regions.get(name, {})}
            for name, rb in binding.regions.items()
            if rb.region.enabled
        },
    }
    cost = mf.Manifest(data).cost()
    data["totals"] = {"compiles": cost.compiles, "instances": cost.instances, "cold_seconds": round(cost.seconds, 3)}
    return data


def save_artifacts(contract: Contract) -> dict[str, Any] | None:
    """Save the artifacts of everything compiled in this process to `[cache] artifacts` (atomic); what was saved."""
    if not contract.cache.artifacts:
        return None
    from contract import _caches

    saved = _caches.save_cache_artifacts()
    if saved is None:
        return None
    return write_artifacts(contract, *saved)


def write_artifacts(contract: Contract, data: bytes, keys: dict[str, list[str]]) -> dict[str, Any]:
    """Write serialized artifacts to `[cache] artifacts` (atomic); the manifest's `artifacts` field."""
    if contract.cache.artifacts is None:
        raise ValueError("write_artifacts needs `[cache] artifacts` set (callers check it first)")
    path = Path(contract.resolve_path(contract.cache.artifacts))
    mf.write_atomic(path, data)
    return {
        "path": contract.cache.artifacts,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "keys": keys,
    }
