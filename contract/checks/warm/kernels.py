"""The kernel pack: the C++ kernels of a CPU warm run, installed into the cache dir before anything compiles.

Torch's portable artifacts carry no C++ kernel on CPU: a start that loads them (or installs a precompiled entry)
still builds every kernel (`<cache_dir>/<key[1:3]>/<key>.so`) unless the file is already there, in which case
Inductor dlopens it as is (`contract._caches`, "C++ kernels on CPU"). So `compile-contract warm` writes the ones
its compiles loaded into `<[cache] artifacts>.kernels` (`contract.warm.kernels`) and records the pack in the manifest
(`kernels`), and `enforce` writes them into the cache dir first, but only a pack that:

1. is the job's and writable by nobody else, like the artifacts file (CC211, the same code: `read_private`);
2. has the sha256 the manifest recorded, and is a zip of regular files named `<2 chars>/<name>.so`, each with the
   recorded size and sha256, nothing else (CC708);
3. was built on a host like this one: CPU architecture and feature flags, C library, compiler and torch (CC709),
   since the kernel key does not hold them.

Anything else is one finding and not a byte is written. Files are written with mode 0600 (dirs 0700 where this makes
them), each through a temporary file linked to its name, so an existing file is never replaced. `check` and
`doctor` run the same inspection (doctor without the host comparison, which needs torch and the compiler).
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import re
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compile_formats.manifest import ManifestError, read
from contract.checks.cache.artifacts import as_written, insecure
from contract.checks.cache.security import Exposed, read_private
from contract.checks.context import CheckContext
from contract.checks.warm.rules import KERNELS_OTHER_HOST, KERNELS_REFUSED
from contract.document.load import Contract
from contract.findings import Finding, Severity

SUFFIX = ".kernels"
"""The pack is `[cache] artifacts` + this suffix."""
WHAT = "the kernel pack"
MAX_BYTES = 1 << 30
"""A pack larger than this is not read (and no more than this is unpacked from it)."""
MEMBER = re.compile(r"[a-z0-9_]{2}/[a-z0-9_][a-z0-9_.-]{0,250}\.so")
"""A member's name: Inductor's `<key[1:3]>/<key>[.main].so`, nothing that could leave its folder."""
EVIDENCE = "cache.kernels"
"""The `CheckContext.evidence` key the inspection is kept under (enforce inspects once, the checks report it)."""
CPUINFO = "/proc/cpuinfo"


@dataclass(frozen=True, kw_only=True)
class Pack:
    """What enforce would install from the kernel pack, and why not."""

    path: Path | None = None
    """The pack (`[cache] artifacts` + `.kernels`); None when the manifest records none."""
    findings: list[Finding] = field(default_factory=list)
    """CC211 (others could write it), CC708 (not the recorded pack), CC709 (built on another kind of host)."""
    files: dict[str, bytes] | None = field(default=None, repr=False)
    """Verified members (`<2 chars>/<name>.so` -> bytes) to install; None when anything above stops it."""


def pack_path(contract: Contract) -> Path | None:
    """Where the pack of `[cache] artifacts` is (as written: a symlink's own directory is checked too)."""
    return as_written(contract, contract.cache.artifacts + SUFFIX) if contract.cache.artifacts else None


def inspect(contract: Contract, *, uid: int | None = None, full: bool = True) -> Pack:
    """Check, read, hash and unpack the pack the manifest records; with `full`, compare the host too."""
    recorded, path = _recorded(contract), pack_path(contract)
    if recorded is None or path is None:
        return Pack()
    if not path.is_file():
        return _refused(contract, path, "it is not there: this start builds every C++ kernel")
    try:
        data = read_private(str(path), uid=os.geteuid() if uid is None else uid, what=WHAT, limit=MAX_BYTES)
    except Exposed as exc:
        return Pack(path=path, findings=[insecure(path, e, WHAT) for e in exc.exposures])
    except (OSError, ValueError) as exc:
        return _refused(
            contract, path, f"cannot read it ({exc.strerror or exc})" if isinstance(exc, OSError) else str(exc)
        )
    files, why = unpack(data, recorded)
    if why is not None:
        return _refused(contract, path, why)
    other = host_differs(recorded.get("host") or {}, host()) if full else None
    if other is not None:
        return Pack(path=path, findings=[_other_host(path, other)])
    return Pack(path=path, files=files)


def _recorded(contract: Contract) -> dict[str, Any] | None:
    """The manifest's `kernels` field (None: no manifest, an unreadable one, which CC701 reports, or no pack)."""
    spec = contract.cache
    if not spec.artifacts or not spec.manifest:
        return None
    try:
        return read(contract.resolve_path(spec.manifest)).kernels
    except ManifestError:
        return None


def unpack(data: bytes, recorded: dict[str, Any]) -> tuple[dict[str, bytes], str | None]:
    """The members, checked against the manifest: ({}, why) at the first thing that is not as recorded."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != recorded.get("sha256"):
        return {}, f"its sha256 is {digest}, the manifest records {recorded.get('sha256')}"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return _members(zf, recorded.get("files") or {})
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError, ValueError, zlib.error) as exc:
        return {}, f"it is not a readable zip ({' '.join(str(exc).split())[:120]})"


def _members(zf: zipfile.ZipFile, files: dict[str, Any]) -> tuple[dict[str, bytes], str | None]:
    infos = zf.infolist()
    names = [i.filename for i in infos]
    for info in infos:
        why = member_problem(info)
        if why is not None:
            return {}, f"member {info.filename!r} {why}"
    if len(set(names)) != len(names) or set(names) != set(files):
        return {}, f"it holds {sorted(names)[:3]}..., not the {len(files)} files the manifest records"
    if sum(i.file_size for i in infos) > MAX_BYTES:
        return {}, f"its files add up to more than {MAX_BYTES >> 30} GiB"
    out: dict[str, bytes] = {}
    for info in infos:
        body = zf.read(info)
        want = files[info.filename] if isinstance(files[info.filename], dict) else {}
        if len(body) != want.get("bytes") or hashlib.sha256(body).hexdigest() != want.get("sha256"):
            return {}, f"member {info.filename!r} is not the file the manifest records (size or sha256)"
        out[info.filename] = body
    return out, None


def member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member may not be installed: a name outside `<2 chars>/<name>.so`, a directory, a link, a device."""
    if not MEMBER.fullmatch(info.filename) or ".." in info.filename:
        return "is not named <2 chars>/<name>.so (a path that could leave its folder)"
    kind = stat.S_IFMT(info.external_attr >> 16)
    if info.is_dir() or kind not in (0, stat.S_IFREG):
        return "is not a regular file (a link, a directory or a device)"
    return None


def host() -> dict[str, Any]:
    """What the kernels' binaries depend on beyond their key: CPU architecture and flags, C library, compiler,
    torch (imports torch through the adapter)."""
    import torch

    from contract import _caches

    return {
        "machine": platform.machine(),
        "cpu_flags": cpu_flags(),
        "libc": " ".join(platform.libc_ver()).strip() or None,
        "compiler": _caches.cpp_compiler_version(),
        "torch": str(torch.__version__),
    }


def cpu_flags(path: str = CPUINFO) -> list[str] | None:
    """The first CPU's feature flags (Linux's `/proc/cpuinfo`), sorted; None where they cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return sorted(set(value.split()))
    except OSError:
        pass
    return None


def host_differs(recorded: dict[str, Any], now: dict[str, Any]) -> str | None:
    """How this host differs from the pack's in something its binaries depend on (None: the same kind)."""
    for key in ("machine", "libc", "compiler", "torch"):
        if recorded.get(key) != now.get(key):
            return f"{key} {_short(recorded.get(key))} -> {_short(now.get(key))}"
    old, new = recorded.get("cpu_flags"), now.get("cpu_flags")
    if not isinstance(old, list) or new is None:
        return "the CPU's feature flags cannot be compared (not recorded or not readable here)"
    missing = sorted(set(old) - set(new))
    return f"this CPU lacks {', '.join(missing[:6])}" + (", ..." if len(missing) > 6 else "") if missing else None


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else "..." + text[-57:]


def install(pack: Pack, cache_dir: str | Path) -> tuple[int, int]:
    """Write the verified members into the cache dir: (files written, files already there, left as they are)."""
    if not pack.files:
        return 0, 0
    root = Path(cache_dir)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = kept = 0
    for name, body in sorted(pack.files.items()):
        folder = root / name[:2]
        if not _private_dir(folder) or os.path.lexists(folder / name[3:]):
            kept += 1
            continue
        written += _put(folder / name[3:], body)
    return written, kept


def install_into_cache(contract: Contract, pack: Pack) -> tuple[int, int]:
    """`install` into the cache dir torch uses now, unless it is not `[cache] dir` (CC201) or others could write it
    (CC207): those checks refuse the start, and nothing is added to a dir that is not the job's."""
    if not pack.files:
        return 0, 0
    from contract import _caches
    from contract.checks.cache.security import insecure as insecure_dir

    cache_dir = _caches.inductor_cache_dir()
    wanted = contract.resolve_path(contract.cache.dir) if contract.cache.dir else None
    if wanted is not None and os.path.realpath(wanted) != os.path.realpath(cache_dir):
        return 0, 0
    if os.path.exists(cache_dir) and insecure_dir(cache_dir):
        return 0, 0
    return install(pack, cache_dir)


def _private_dir(folder: Path) -> bool:
    """The member's folder exists as a real directory (made with mode 0700 when missing)."""
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    return stat.S_ISDIR(os.lstat(folder).st_mode)


def _put(target: Path, body: bytes) -> int:
    """Write one file with mode 0600 under its name unless something is there already (1: written)."""
    fd, tmp = tempfile.mkstemp(prefix=".kernel.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, target)  # fails where a file appeared meanwhile: never replaced
        return 1
    except FileExistsError:
        return 0
    finally:
        Path(tmp).unlink(missing_ok=True)


def of(ctx: CheckContext, *, full: bool = True) -> Pack:
    """The context's inspection, made once (enforce's, handed over as evidence, or made here)."""
    if EVIDENCE not in ctx.evidence:
        ctx.evidence[EVIDENCE] = inspect(ctx.contract, full=full)
    pack: Pack = ctx.evidence[EVIDENCE]
    return pack


def _refused(contract: Contract, path: Path, why: str) -> Pack:
    severity: Severity = "error" if contract.cache.require_warm else "warning"
    finding = KERNELS_REFUSED.finding(
        "cache.artifacts",
        f"{WHAT} {path} is not installed: {why}",
        "ship the .kernels file the same `compile-contract warm` run wrote with the manifest (run it again, ship all "
        "three files)",
        severity=severity,
    )
    return Pack(path=path, findings=[finding])


def _other_host(path: Path, why: str) -> Finding:
    return KERNELS_OTHER_HOST.finding(
        "cache.artifacts",
        f"{WHAT} {path} was built on another kind of host ({why}): this start builds its C++ kernels",
        "run `compile-contract warm CONTRACT` on a host of this CPU model, compiler and torch, and ship its pack",
    )
