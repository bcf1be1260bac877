"""CC7xx: will this start be warm? The environment, the regions and the cache compared with the warm manifest.

`check` (run by `check` and `enforce`, torch loaded) compares everything; `doctor_check` compares what needs no
torch import (versions from package metadata, the compiler's environment variables, the cache entries on disk, the
PGO state file), so the launcher's preflight stays fast. Each finding names the component, both values and the cost
the manifest recorded. The comparison itself lives in `manifest` (shared with the runtime monitor).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from compile_formats import fingerprint
from compile_formats.manifest import Change, Manifest, ManifestError, environment_changes, read
from contract.checks.cache import artifacts
from contract.checks.cache.dirs import resolve_dir
from contract.checks.context import CheckContext
from contract.checks.warm import kernels
from contract.checks.warm.rules import (
    ARTIFACTS_NOT_LOADED,
    ENTRIES_MISSING,
    ENVIRONMENT_CHANGED,
    MANIFEST_MISSING,
    MANIFEST_UNREADABLE,
    PGO_STATE_MISSING,
    REGION_CHANGED,
)
from contract.document.load import Contract
from contract.findings import Finding, Severity

MAX_CHANGES = 8
"""Component findings shown one by one; the rest are summed up in one more (a torch upgrade changes hundreds)."""
JOB_ID_VARS = ("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY")
"""Where `torch.compiler.config.job_id` reads its default (first one set wins)."""


def check(ctx: CheckContext, *, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """Every warm-start prediction (imports torch through the adapter when a manifest is configured)."""
    return _predict(ctx, os.environ if environ is None else environ, full=True)


def doctor_check(ctx: CheckContext, *, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """The predictions that need no torch import (for `doctor`)."""
    return _predict(ctx, os.environ if environ is None else environ, full=False)


def _predict(ctx: CheckContext, environ: Mapping[str, str], *, full: bool) -> list[Finding]:
    contract, spec = ctx.contract, ctx.contract.cache
    out = _artifacts_file(ctx) + kernels.of(ctx, full=full).findings
    if spec.manifest is None:
        if spec.require_warm:
            out.insert(0, _finding(MANIFEST_MISSING, spec, True, "cache.require_warm", *_NO_MANIFEST))
        return out
    manifest, found = _read(contract)
    if manifest is None:
        return found + out
    current = fingerprint.full_environment(environ) if full else fingerprint.static_environment(environ)
    if full:
        current.pop("env", None)  # torch's config already reflects the variables it read
    changes = environment_changes(manifest.environment, current)
    found = _environment(spec, manifest, changes)
    if full and ctx.binding is not None:
        found += _regions(spec, manifest, ctx.binding)
    if not any(c.certain for c in changes):
        found += _entries(ctx, manifest, environ)
    found += _pgo(manifest, contract, ctx, environ, full=full)
    return found + out


_NO_MANIFEST = (
    "require_warm = true, but [cache] has no manifest to compare this start with",
    'set [cache] manifest = "warm-manifest.json" and run `compile-contract warm CONTRACT` once',
)


def _severity(spec: Any, certain: bool) -> Severity:
    return "error" if spec.require_warm and certain else "warning"


def _finding(rule: Any, spec: Any, certain: bool, where: str, message: str, fix: str) -> Finding:
    return rule.finding(where, message, fix, severity=_severity(spec, certain))


def _read(contract: Contract) -> tuple[Manifest | None, list[Finding]]:
    """The manifest, or CC702 (no file) / CC701 (unusable)."""
    spec = contract.cache
    if spec.manifest is None:  # callers check `[cache] manifest` first
        return None, []
    path = contract.resolve_path(spec.manifest)
    try:
        return read(path), []
    except ManifestError as exc:
        if not path.exists():
            msg = f"no warm manifest at {path}: nothing to tell whether this start is warm"
            return None, [_finding(MANIFEST_MISSING, spec, True, "cache.manifest", msg, _WARM_FIX)]
        msg = f"warm manifest {path} is unusable: {exc}"
        return None, [_finding(MANIFEST_UNREADABLE, spec, True, "cache.manifest", msg, _WARM_FIX)]


_WARM_FIX = "run `compile-contract warm CONTRACT` to write the manifest (atomically) with the production settings"


def _environment(spec: Any, manifest: Manifest, changes: list[Change]) -> list[Finding]:
    """CC703: one finding per changed component (the first MAX_CHANGES), with the recorded cold cost."""
    if not changes:
        return []
    cost = manifest.cost().text()
    out = []
    for change in changes[:MAX_CHANGES]:
        effect = _effect(change)
        expect = f"expect {cost}" if change.certain else f"up to {cost}"
        out.append(
            _finding(
                ENVIRONMENT_CHANGED,
                spec,
                change.certain,
                _location(change),
                f"{change.text()} {effect}: {expect}",
                f"{_restore(change)} as when the manifest was written, or accept one cold start and run "
                f"`compile-contract warm` for the new value",
            )
        )
    rest = changes[MAX_CHANGES:]
    if rest:
        names = ", ".join(c.component for c in rest[:5]) + (", ..." if len(rest) > 5 else "")
        certain = any(c.certain for c in rest)
        out.append(
            _finding(
                ENVIRONMENT_CHANGED,
                spec,
                certain,
                "cache.manifest",
                f"{len(rest)} more compile-relevant components changed ({names})",
                "compare the environment with the manifest's `environment` section",
            )
        )
    return out


def _effect(change: Change) -> str:
    if not change.certain:
        return "may change the cache keys"
    if change.component.startswith("functorch_config"):
        return "changes every AOTAutograd key"
    return "changes every FX-graph key"


def _restore(change: Change) -> str:
    """How to get the recorded value back, in the component's own terms."""
    if change.component.startswith("env "):
        var = change.component.removeprefix("env ")
        return f"unset {var}" if change.old == "unset" else f"export {var}={change.old}"
    if change.component.endswith("]"):
        return f"set {change.component} back to {change.old} (in code or through its environment variable)"
    return f"start with {change.component} {change.old}"


def _location(change: Change) -> str:
    return change.component.removeprefix("env ") if change.component.startswith("env ") else change.component


def _regions(spec: Any, manifest: Manifest, binding: Any) -> list[Finding]:
    """CC704: a region whose settings (certain) or code (may) differ from the warm run's."""
    current = fingerprint.region_fingerprints(binding)
    out = []
    for name, rb in binding.regions.items():
        recorded = manifest.regions.get(name)
        if not rb.region.enabled or not isinstance(recorded, dict) or not recorded.get("instances"):
            continue
        settings = recorded.get("settings") not in (None, current[name]["settings"])
        source = recorded.get("source") not in (None, current[name]["source"])
        if not (settings or source):
            continue
        what = " and ".join(w for w, on in (("compile settings", settings), ("code", source)) if on)
        cost = manifest.cost(regions={name}).text()
        verb = "changes its cache keys: expect" if settings else "may change its traced graphs: up to"
        out.append(
            _finding(
                REGION_CHANGED,
                spec,
                settings,
                rb.region.loc(),
                f"region {name!r}: its {what} differ from the warm run's, which {verb} {cost}",
                "expected after a change to this region: run `compile-contract warm` once the change ships",
            )
        )
    return out


def _entries(ctx: CheckContext, manifest: Manifest, environ: Mapping[str, str]) -> list[Finding]:
    """CC705: recorded keys absent from the cache dir this start uses (no remote cache, no artifacts to load)."""
    spec = ctx.contract.cache
    if spec.remote or environ.get("TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE") == "1":
        return []
    cache_dir = resolve_dir(ctx.contract, ctx.snapshot, environ).path
    supplied = _artifact_keys(ctx, manifest)
    cold = {id(r) for r in _records(manifest) if _missing(r, cache_dir, supplied)}
    if not cold:
        return []
    cost = manifest.cost(only=cold)
    total = sum(1 for _ in manifest.compiles())
    was = manifest.cache.get("dir")
    where = f"cache dir {cache_dir}" + (f" (the warm run used {was})" if was and was != cache_dir else "")
    return [
        _finding(
            ENTRIES_MISSING,
            spec,
            True,
            cache_dir,
            f"{cost.compiles} of {total} recorded compiles find no cache entry in {where}: expect {cost.text()}",
            "export TORCHINDUCTOR_CACHE_DIR=<the dir `warm` filled>, or set [cache] artifacts so enforce loads "
            "the compiled code first, or use a remote cache",
        )
    ]


def _records(manifest: Manifest) -> list[dict[str, Any]]:
    return [record for _, _, record in manifest.compiles()]


def _missing(record: dict[str, Any], cache_dir: str, supplied: set[str]) -> bool:
    """A compile is cold when one of its FX-graph entries is absent (or, with none recorded, its AOT entry)."""
    lookups = [lk for lk in record.get("lookups", []) if lk.get("key")]
    fx = [lk["key"] for lk in lookups if lk["cache"] == "fx_graph"]
    keys = fx or [lk["key"] for lk in lookups if lk["cache"] == "aot_autograd"]
    return any(k not in supplied and not _entry_exists(cache_dir, k) for k in keys)


def _entry_exists(cache_dir: str, key: str) -> bool:
    """Where Inductor stores a key (`FxGraphCache._get_tmp_dir_for_key`, `AOTAutogradCache`, torch 2.11-2.13)."""
    if key.startswith("a"):
        path = os.path.join(cache_dir, "aotautograd", key)
    else:
        path = os.path.join(cache_dir, "fxgraph", key[1:3], key)
    try:
        return os.path.isdir(path) and any(os.scandir(path))
    except OSError:
        return False


def _artifact_keys(ctx: CheckContext, manifest: Manifest) -> set[str]:
    """Keys the `[cache] artifacts` file will write when enforce loads it (as `warm` saved them; none when enforce
    will not load it)."""
    recorded = manifest.artifacts or {}
    if not artifacts.of(ctx).loadable:
        return set()
    keys = recorded.get("keys") if isinstance(recorded, dict) else None
    return {str(k) for v in keys.values() if isinstance(v, list) for k in v} if isinstance(keys, dict) else set()


def _pgo(
    manifest: Manifest, contract: Contract, ctx: CheckContext, environ: Mapping[str, str], *, full: bool
) -> list[Finding]:
    """CC706: the warm run had PGO state; this start has another job id or no state file."""
    recorded = manifest.pgo
    job, state = recorded.get("job_id"), recorded.get("state_file")
    if not job or not recorded.get("present") or not isinstance(state, str):
        return []
    now = _current_pgo(contract, ctx, environ, state) if full else _static_pgo(contract, ctx, environ, state)
    fix = f"export TORCH_COMPILE_JOB_ID={job} and keep the cache dir's dynamo/ folder (or ship [cache] artifacts)"
    effect = "frames that became dynamic compile twice (static first, never cached, then dynamic)"
    if now["job_id"] != job:
        msg = f"PGO job id {job} -> {now['job_id'] or 'unset'}: this start reads no recorded profile, so {effect}"
        return [PGO_STATE_MISSING.finding("TORCH_COMPILE_JOB_ID", msg, fix)]
    if not now["present"] and "pgo" not in _artifact_types(ctx, manifest):
        msg = f"PGO state {now['path']} is missing: {effect}"
        return [PGO_STATE_MISSING.finding(str(now["path"]), msg, fix)]
    return []


def _current_pgo(contract: Contract, ctx: CheckContext, environ: Mapping[str, str], state: str) -> dict[str, Any]:
    from contract import _caches

    now = _caches.pgo_state()
    path = os.path.join(_caches.inductor_cache_dir(), now["state_file"] or state)
    return {"job_id": now["job_id"], "present": now["present"], "path": path}


def _static_pgo(contract: Contract, ctx: CheckContext, environ: Mapping[str, str], state: str) -> dict[str, Any]:
    job = next((environ[v] for v in JOB_ID_VARS if environ.get(v)), None)
    path = os.path.join(resolve_dir(contract, ctx.snapshot, environ).path, state)
    return {"job_id": job, "present": os.path.isfile(path), "path": path}


def _artifact_types(ctx: CheckContext, manifest: Manifest) -> set[str]:
    recorded = manifest.artifacts or {}
    keys = recorded.get("keys") if isinstance(recorded, dict) else None
    if not isinstance(keys, dict) or not artifacts.of(ctx).loadable:
        return set()
    return {k for k, v in keys.items() if v}


def _artifacts_file(ctx: CheckContext) -> list[Finding]:
    """CC707 (check, doctor): the `[cache] artifacts` file enforce would load is not there, or torch cannot use it
    (damaged or foreign: checked in pure Python, so torch never prints a traceback over it)."""
    found = artifacts.of(ctx)
    if found.path is None:
        return []
    if not found.present:
        return [
            ARTIFACTS_NOT_LOADED.finding(
                "cache.artifacts",
                f"no cache artifacts at {found.path}: enforce has nothing to load, a host with an empty cache compiles "
                "cold",
                "run `compile-contract warm CONTRACT` (it saves them) and ship the file with the contract",
            )
        ]
    if found.unusable is None:
        return []
    return [
        ARTIFACTS_NOT_LOADED.finding(
            "cache.artifacts",
            f"cache artifacts {found.path} cannot be loaded: {found.unusable}; enforce skips them, so this start "
            "compiles cold where the local cache is empty",
            "run `compile-contract warm CONTRACT` with this torch to save them again, ship the new file and pin it "
            "(`--pin`)",
        )
    ]
