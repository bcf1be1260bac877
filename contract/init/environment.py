"""What `init` writes for the environment it runs in: the installed torch's defaults and the Inductor cache as this
machine has it (so the generated `[cache]` table passes its own checks here, and says what to change)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import SimpleNamespace

DEFAULT_BACKEND = "inductor"
"""`torch.compile`'s default backend on torch 2.11-2.13 (`backend=None` resolves to it)."""


@dataclass(frozen=True, kw_only=True)
class Environment:
    """The installed torch and its Inductor cache."""

    torch_version: str
    """e.g. `2.13.0+cpu`."""
    modes: tuple[str, ...]
    """Inductor modes this torch accepts."""
    fx_graph_cache: bool
    """The FX graph cache is on."""
    autograd_cache: bool
    """The AOTAutograd cache is on."""
    cache_dir: str
    """The directory Inductor writes to."""
    cache_source: str
    """Where that choice comes from: `TORCHINDUCTOR_CACHE_DIR` or `default`."""
    volatile: str
    """Why the cache dir does not survive a restart ("" when it does)."""

    @property
    def torch_spec(self) -> str:
        """`>=MAJOR.MINOR` of the installed torch (the budgets were measured with it)."""
        major, minor = (self.torch_version.split("+")[0].split(".") + ["0", "0"])[:2]
        return f">={major}.{minor}"


def read_environment() -> Environment:
    """The installed torch's modes and the cache this process would use (imports the compiler's config)."""
    import torch

    from contract import ENV_AT_IMPORT, _caches, _torch
    from contract.checks.cache.dirs import VOLATILE_FS, mount_of, nearest_existing, resolve_dir
    from contract.document.schema import CacheSpec
    from contract.env import default_cache_dir

    switches = _caches.cache_switches()
    cache_dir = resolve_dir(SimpleNamespace(cache=CacheSpec()), ENV_AT_IMPORT, os.environ)
    mount = mount_of(os.path.realpath(nearest_existing(cache_dir.path)))
    volatile = ""
    if cache_dir.path == default_cache_dir():
        volatile = "torch's default dir under the temp dir, lost on reboot"
    elif mount[1] in VOLATILE_FS:
        volatile = f"on {mount[1]} ({mount[0]}), lost on restart"
    off = switches["force_disable_caches"]
    return Environment(
        torch_version=str(torch.__version__),
        modes=tuple(_torch.inductor_modes()),
        fx_graph_cache=switches["fx_graph_cache"] and not off,
        autograd_cache=switches["autograd_cache"] and not off,
        cache_dir=cache_dir.path,
        cache_source=cache_dir.source,
        volatile=volatile,
    )
