"""`compile-contract warm` on CPU: pack the C++ kernels this run's compiles loaded beside `[cache] artifacts`.

Torch's portable artifacts carry the FX graphs but not the C++ kernels they call on CPU, so a host with an empty
cache dir builds every kernel again (`contract._caches`, "C++ kernels on CPU"). The pack holds exactly the binaries
this process's Inductor loaded (its C++ code caches' keys: kernels of graphs compiled, read from the cache or
installed by a precompiled entry) and the ISA probes Inductor builds in every fresh cache dir, as a zip of
`<2 chars>/<name>.so` members written atomically; the manifest's `kernels` field records its path, bytes, sha256,
every member's bytes and sha256, and the host they were built on. `enforce` installs it only after the checks in
`contract.checks.warm.kernels`. On GPU the kernels are Triton's, inside the FX entries: no C++ kernel is loaded and
no pack is written.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import zipfile
from pathlib import Path
from typing import Any

from contract.checks.warm.kernels import MEMBER, SUFFIX, host
from contract.document.load import Contract

EPOCH = (1980, 1, 1, 0, 0, 0)
"""Every member's timestamp: the same kernels give the same pack bytes."""


def collect(cache_dir: str | Path) -> dict[str, Path]:
    """`<2 chars>/<name>.so` -> file, for the C++ binaries this process loaded and the ISA probes (regular files
    only); empty when no C++ kernel was loaded (GPU, or nothing compiled)."""
    from contract import _caches

    keys, probes = _caches.cpp_kernel_keys(), _caches.isa_probe_sources()
    root = Path(cache_dir)
    found: dict[str, Path] = {}
    for key in keys:
        for path in root.joinpath(key[1:3]).glob(f"{key}*.so") if len(key) > 3 else ():
            _keep(found, root, path)
    if not found:
        return {}
    for source in root.glob("??/*.cpp"):
        if ".main" not in source.name and _text(source) in probes:
            _keep(found, root, source.with_suffix(".so"))
    return found


def _keep(found: dict[str, Path], root: Path, path: Path) -> None:
    """Add a binary if it is a regular file (not a link) with a name a pack may hold."""
    name = path.relative_to(root).as_posix()
    try:
        regular = stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return
    if regular and MEMBER.fullmatch(name):
        found[name] = path


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() if path.stat().st_size < 65536 else ""
    except OSError:
        return ""


def pack(files: dict[str, Path]) -> tuple[bytes, dict[str, dict[str, Any]]]:
    """The zip's bytes and, per member, its bytes and sha256 (sorted names, fixed timestamps, mode 0600)."""
    buf = io.BytesIO()
    recorded: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            body = files[name].read_bytes()
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.external_attr = (stat.S_IFREG | 0o600) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, body)
            recorded[name] = {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    return buf.getvalue(), recorded


def save(contract: Contract, cache_dir: str | Path, write: Any) -> dict[str, Any] | None:
    """Write the pack beside `[cache] artifacts` with `write(path, data)` (atomic); the manifest's `kernels` field,
    None when there is nothing to pack or no artifacts to pack it beside."""
    if not contract.cache.artifacts:
        return None
    files = collect(cache_dir)
    if not files:
        return None
    data, recorded = pack(files)
    rel = contract.cache.artifacts + SUFFIX
    write(Path(contract.resolve_path(rel)), data)
    return {
        "path": rel,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "files": recorded,
        "host": host(),
    }
