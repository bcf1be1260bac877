"""What one rank reports about itself for the ranks to compare: component name -> value, the same text on every rank
that compiles the same graphs (names are what CC802-CC807 report and `[distributed] per_rank` matches)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from contract.checks.cache.check import SWITCHES, effective_switches, env_switch
from contract.checks.cache.dirs import resolve_dir
from contract.document.load import Contract
from contract.env import EnvSnapshot, compiler_imported, torch_version

COMPILE_ENV_PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_", "TORCH_COMPILE")
"""Environment variables that change what Dynamo traces or Inductor generates (`TORCH_COMPILE*` covers
`TORCH_COMPILER_COLLECTIVES`)."""
CACHE_ENV = frozenset({"TORCHINDUCTOR_CACHE_DIR", *(var for names, _ in SWITCHES.values() for var in names)})
"""Variables the cache policy (`cache.*`) already reports as their effect, not repeated as `env.*`."""


def fingerprint(contract: Contract | None, snapshot: EnvSnapshot, environ: Mapping[str, str]) -> dict[str, str]:
    """Every component of this rank; torch-side ones (config, CUDA/triton versions) only once torch's compiler is
    loaded here (`doctor` never imports it)."""
    out = {"contract.sha256": contract.sha256 if contract else "<not loaded>"}
    out.update(_versions())
    if contract is not None:
        out.update(_regions(contract))
        out.update(_cache(contract, snapshot, environ))
    out.update({f"env.{k}": v for k, v in sorted(environ.items()) if _compile_env(k)})
    if compiler_imported():
        from contract import _torch

        out.update({f"config.{k}": v for k, v in _torch.compile_config_changes().items()})
    return out


def _compile_env(name: str) -> bool:
    return name.startswith(COMPILE_ENV_PREFIXES) and name not in CACHE_ENV


def _versions() -> dict[str, str]:
    if compiler_imported():
        from contract import _torch

        return {f"version.{k}": v for k, v in _torch.versions().items()}
    return {"version.torch": torch_version() or "<not installed>"}


def _regions(contract: Contract) -> dict[str, str]:
    """Each region's effective settings, as one canonical JSON text."""
    out = {}
    for region in contract.regions:
        settings = {k: v for k, v in asdict(region).items() if k not in ("index", "name", "reason")}
        out[f"region.{region.name}"] = json.dumps(settings, sort_keys=True, default=str)
    return out


def _cache(contract: Contract, snapshot: EnvSnapshot, environ: Mapping[str, str]) -> dict[str, str]:
    """The cache policy in effect: the directory torch will use, each switch, the remote cache."""
    out = {"cache.dir": resolve_dir(contract, snapshot, environ).path, "cache.remote": contract.cache.remote or ""}
    switches = effective_switches()
    for name in SWITCHES:
        out[f"cache.{name}"] = str(switches[name]) if switches is not None else _from_env(name, environ)
    return out


def _from_env(name: str, environ: Mapping[str, str]) -> str:
    found = env_switch(name, environ)
    return str(found[1]) if found else "default"


def summary(fp: Mapping[str, Any]) -> str:
    """A short digest of a fingerprint (equal fingerprints, equal digests)."""
    import hashlib

    return hashlib.sha256(json.dumps(dict(fp), sort_keys=True).encode()).hexdigest()[:16]
