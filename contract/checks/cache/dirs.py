"""The cache directory torch will use, and whether it can serve as one: absolute, a writable directory, persistent,
executable, with space and inodes to spare (CC202-CC206), and safe from other users (`security`, CC207)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract.checks.cache.rules import DIR_NOT_ABSOLUTE, DIR_UNUSABLE, LOW_SPACE, NOEXEC, NOT_PERSISTENT
from contract.checks.cache.security import insecure
from contract.env import CACHE_DIR_VAR, EnvSnapshot, default_cache_dir
from contract.findings import Finding

VOLATILE_FS = frozenset({"tmpfs", "ramfs"})


GIB = 1 << 30


@dataclass(frozen=True, kw_only=True)
class CacheDir:
    """The cache dir torch will use, and where that choice came from."""

    path: str
    """Absolute path."""
    source: str
    """`cache.dir`, `TORCHINDUCTOR_CACHE_DIR` or `default`."""
    raw: str
    """The value as written (may be relative)."""


def resolve_dir(contract: Any, snapshot: EnvSnapshot, environ: Mapping[str, str]) -> CacheDir:
    """`[cache] dir`, else the user's `TORCHINDUCTOR_CACHE_DIR`, else torch's default `/tmp/torchinductor_<user>`."""
    if contract.cache.dir:
        return CacheDir(path=str(contract.resolve_path(contract.cache.dir)), source="cache.dir", raw=contract.cache.dir)
    raw = user_cache_dir(snapshot, environ)
    if raw is None:
        return CacheDir(path=default_cache_dir(), source="default", raw=default_cache_dir())
    return CacheDir(path=os.path.abspath(raw), source=CACHE_DIR_VAR, raw=raw)


def user_cache_dir(snapshot: EnvSnapshot, environ: Mapping[str, str]) -> str | None:
    """The user's TORCHINDUCTOR_CACHE_DIR as written (torch 2.13 rewrites it absolute at import; its default is None)."""
    now = environ.get(CACHE_DIR_VAR)
    before = snapshot.user_value(CACHE_DIR_VAR)
    if before is not None and (now is None or os.path.abspath(before) == os.path.abspath(now)):
        return before
    if now is None or os.path.abspath(now) == default_cache_dir():
        return None
    return now


def check_dir(cache_dir: CacheDir, spec: Any) -> list[Finding]:
    """CC202-CC207 on one cache dir."""
    out = []
    if not os.path.isabs(cache_dir.raw) and cache_dir.source == CACHE_DIR_VAR:
        out.append(
            DIR_NOT_ABSOLUTE.finding(
                CACHE_DIR_VAR,
                f"{CACHE_DIR_VAR}={cache_dir.raw} is relative to the working directory",
                f"export {CACHE_DIR_VAR}={cache_dir.path} before python starts",
            )
        )
    if "\0" in cache_dir.path:
        return out + [
            DIR_UNUSABLE.finding(_label(cache_dir), "the cache dir contains a NUL byte", "use a plain absolute path")
        ]
    existing = nearest_existing(cache_dir.path)
    usable = _usable(cache_dir, existing)
    if usable:
        return out + [usable]
    mount = mount_of(os.path.realpath(existing))
    out += _persistent(cache_dir, spec, mount) + _noexec(cache_dir, mount) + _space(cache_dir, existing, spec)
    return out + insecure(cache_dir.path)


def nearest_existing(path: str) -> str:
    """The path itself, or its nearest ancestor that exists (what statvfs and the mount table describe)."""
    p = path
    while not os.path.lexists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    return p


def _usable(cache_dir: CacheDir, existing: str) -> Finding | None:
    """CC203: a writable directory, or a writable parent to create it in."""
    where, what = cache_dir.path, _label(cache_dir)
    if not os.path.isdir(existing):
        return DIR_UNUSABLE.finding(
            where, f"{what}: {existing} is not a directory", "point the cache dir at a directory"
        )
    if existing == cache_dir.path and not os.access(existing, os.W_OK | os.X_OK | os.R_OK):
        return DIR_UNUSABLE.finding(
            where,
            f"{what} is not writable by uid {os.geteuid()}",
            "chown the dir to the job's user, or use a dir it owns",
        )
    if existing != cache_dir.path and not os.access(existing, os.W_OK | os.X_OK):
        return DIR_UNUSABLE.finding(
            where,
            f"{what} does not exist and {existing} is not writable to create it",
            f"mkdir -p {cache_dir.path} as the job's user, or use a dir it owns",
        )
    return None


def _label(cache_dir: CacheDir) -> str:
    """How a message names the dir: by where it came from."""
    return {"cache.dir": "[cache] dir", CACHE_DIR_VAR: CACHE_DIR_VAR, "default": "torch's default cache dir"}[
        cache_dir.source
    ]


def mount_of(path: str, mounts_file: str = "/proc/mounts") -> tuple[str, str, frozenset[str]]:
    """(mount point, fs type, options) of the mount containing a real path, from the kernel's mount table."""
    best: tuple[str, str, frozenset[str]] = ("/", "", frozenset())
    try:
        with open(mounts_file, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return best
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        point = _unescape(parts[1])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, parts[2], frozenset(parts[3].split(",")))
    return best


def _unescape(field: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040)."""
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field


def _persistent(cache_dir: CacheDir, spec: Any, mount: tuple[str, str, frozenset[str]]) -> list[Finding]:
    """CC204 when the contract requires a persistent cache."""
    if not spec.require_persistent:
        return []
    fix = f"export {CACHE_DIR_VAR}=/mnt/persist/inductor before python starts and set [cache] dir to it"
    if cache_dir.path == default_cache_dir():
        return [
            NOT_PERSISTENT.finding(
                cache_dir.path, f"{_label(cache_dir)} {cache_dir.path} is torch's default temporary dir", fix
            )
        ]
    if mount[1] in VOLATILE_FS:
        return [
            NOT_PERSISTENT.finding(
                cache_dir.path, f"{_label(cache_dir)} is on {mount[1]} ({mount[0]}), lost on restart", fix
            )
        ]
    return []


def _noexec(cache_dir: CacheDir, mount: tuple[str, str, frozenset[str]]) -> list[Finding]:
    """CC205: Inductor loads the shared libraries it compiles from the cache dir."""
    if "noexec" not in mount[2]:
        return []
    return [
        NOEXEC.finding(
            cache_dir.path,
            f"{_label(cache_dir)} is on {mount[0]}, mounted noexec: compiled kernels cannot be loaded",
            "move the cache dir to a filesystem mounted without noexec",
        )
    ]


def _space(cache_dir: CacheDir, existing: str, spec: Any) -> list[Finding]:
    """CC206 from statvfs (space and inodes available to unprivileged users)."""
    try:
        st = os.statvfs(existing)
    except OSError:
        return []
    out = []
    free = st.f_bavail * st.f_frsize
    if free < spec.min_free_gib * GIB:
        out.append(
            LOW_SPACE.finding(
                cache_dir.path,
                f"{free / GIB:.2f} GiB free, below min_free_gib = {spec.min_free_gib:g}",
                "free space, move the cache dir, or lower cache.min_free_gib",
            )
        )
    if st.f_files > 0 and st.f_favail < spec.min_free_inodes:
        out.append(
            LOW_SPACE.finding(
                cache_dir.path,
                f"{st.f_favail} free inodes, below min_free_inodes = {spec.min_free_inodes}",
                "delete old cache entries, move the cache dir, or lower cache.min_free_inodes",
            )
        )
    return out
