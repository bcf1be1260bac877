"""CC2xx: the Inductor cache preflight, from `[cache]`: variables, directory, filesystem, security, remote Redis.

Inductor loads compiled code from its cache dir and writes many small files there; a bad dir costs every restart
its full compile tax, or lets another user plant code. Nothing here imports torch: the compiler's effective
switches are read only when the compiler is already loaded (`check`), never loaded just to look (`doctor`).
The directory checks live in `dirs` and `security`, the remote ones in `remote`, the artifacts file's in `artifacts`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from contract.checks.cache import artifacts
from contract.checks.cache.dirs import CacheDir, check_dir, resolve_dir
from contract.checks.cache.remote import check_remote, remote_insecure, remote_unused
from contract.checks.cache.rules import CACHE_DISABLED, ENV_NOT_EFFECTIVE
from contract.checks.context import CheckContext
from contract.env import CACHE_DIR_VAR, compiler_imported, default_cache_dir
from contract.findings import Finding

SWITCHES = {
    "fx_graph_cache": (("TORCHINDUCTOR_FX_GRAPH_CACHE",), True),
    "autograd_cache": (("TORCHINDUCTOR_AUTOGRAD_CACHE",), True),
    "force_disable_caches": (("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES"), False),
}
"""Effective switch -> (the variables torch reads for it, first one set wins; its default), torch 2.11-2.13."""


CACHE_NAMES = {"fx_graph_cache": "FX graph cache", "autograd_cache": "AOTAutograd cache"}


def check(ctx: CheckContext, *, environ: Mapping[str, str] | None = None, timeout_s: float = 1.0) -> list[Finding]:
    """Every cache check for the contract's `[cache]` (current environment unless one is injected)."""
    environ = os.environ if environ is None else environ
    spec = ctx.contract.cache
    switches = effective_switches()
    out = _too_late(environ, switches)
    cache_dir = resolve_dir(ctx.contract, ctx.snapshot, environ)
    out += _dir_mismatch(cache_dir, environ)
    out += check_dir(cache_dir, spec)
    out += _disabled(spec, environ, switches)
    if spec.remote:
        out += check_remote(spec.remote, timeout_s) + remote_unused(spec.remote, environ, switches)
    out += remote_insecure(spec.remote, environ)
    return out + artifacts.of(ctx).trust


def effective_switches() -> dict[str, bool] | None:
    """The compiler's effective cache switches, only when it is already imported (never import it just to look)."""
    if not compiler_imported():
        return None
    from contract import _caches

    return _caches.cache_switches()


def env_switch(name: str, environ: Mapping[str, str]) -> tuple[str, bool] | None:
    """(variable, value) of the first of the switch's variables set to 0/1, as torch reads them."""
    for var in SWITCHES[name][0]:
        if environ.get(var) in ("0", "1"):
            return var, environ[var] == "1"
    return None


def _too_late(environ: Mapping[str, str], switches: dict[str, bool] | None) -> list[Finding]:
    """CC201: a 0/1 variable that disagrees with the effective switch was set after the compiler read it."""
    if switches is None:
        return []
    out = []
    for name in SWITCHES:
        found = env_switch(name, environ)
        if found and found[1] != switches[name]:
            var = found[0]
            out.append(
                ENV_NOT_EFFECTIVE.finding(
                    var,
                    f"{var}={environ[var]} is ignored: torch's {name} is "
                    f"{switches[name]} (the variable was set after torch._dynamo was imported)",
                    f"export {var}={environ[var]} before python starts, not in os.environ after import",
                )
            )
    return out


def _dir_mismatch(cache_dir: CacheDir, environ: Mapping[str, str]) -> list[Finding]:
    """CC201: torch writes to TORCHINDUCTOR_CACHE_DIR (or its default), which must be the contract's dir."""
    if cache_dir.source != "cache.dir":
        return []
    now = environ.get(CACHE_DIR_VAR)
    used = os.path.abspath(now) if now else default_cache_dir()
    if os.path.realpath(used) == os.path.realpath(cache_dir.path):
        return []
    return [
        ENV_NOT_EFFECTIVE.finding(
            CACHE_DIR_VAR,
            f"torch will use {used}, not [cache] dir {cache_dir.path}",
            f"export {CACHE_DIR_VAR}={cache_dir.path} before python starts",
        )
    ]


def _disabled(spec: Any, environ: Mapping[str, str], switches: dict[str, bool] | None) -> list[Finding]:
    """CC208: a cache the contract requires is off (effective config when loaded, else predicted from env)."""
    out = []
    for name, label in CACHE_NAMES.items():
        if not getattr(spec, name):
            continue
        where = _why_off(name, environ, switches)
        if where:
            out.append(
                CACHE_DISABLED.finding(
                    where, f"the {label} is disabled, but [cache] {name} = true requires it", _disabled_fix(where, name)
                )
            )
    return out


def _why_off(name: str, environ: Mapping[str, str], switches: dict[str, bool] | None) -> str | None:
    """What turns the cache off (a variable or a config key), or None when it is on."""
    for key in ("force_disable_caches", name):
        found = env_switch(key, environ)
        if found and found[1] == (key == "force_disable_caches"):
            if switches is None or switches[key] == found[1]:
                return found[0]
    if switches is None:
        return None
    if switches["force_disable_caches"]:
        return "torch.compiler.config.force_disable_caches"
    if not switches[name]:
        return {
            "fx_graph_cache": "torch._inductor.config.fx_graph_cache",
            "autograd_cache": "torch._functorch.config.enable_autograd_cache",
        }[name]
    return None


def _disabled_fix(where: str, name: str) -> str:
    if where.startswith("TORCH"):
        return f"unset {where} before python starts, or set [cache] {name} = false"
    return f"do not turn {where} off in code, or set [cache] {name} = false"
