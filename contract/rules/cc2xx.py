"""CC2xx: the Inductor cache preflight, from `[cache]`: variables, directory, filesystem, security, remote Redis.

Inductor loads compiled code from its cache dir and writes many small files there; a bad dir costs every restart
its full compile tax, or lets another user plant code. Nothing here imports torch: the compiler's effective
switches are read only when the compiler is already loaded (`check`), never loaded just to look (`doctor`).
"""
from __future__ import annotations

import grp
import os
import pwd
import socket
import ssl
import stat
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import unquote, urlsplit

from contract.env import CACHE_DIR_VAR, EnvSnapshot, compiler_imported, default_cache_dir
from contract.findings import Finding, Rule

ENV_NOT_EFFECTIVE = Rule(code="CC201", name="cache-env-not-effective", severity="error", doc="""\
## What it does
Compares the cache variables in the environment with what torch actually uses: `TORCHINDUCTOR_FX_GRAPH_CACHE`,
`TORCHINDUCTOR_AUTOGRAD_CACHE` and `TORCHINDUCTOR_FORCE_DISABLE_CACHES` against the effective
`torch._inductor.config.fx_graph_cache`, `torch._functorch.config.enable_autograd_cache` and
`torch.compiler.config.force_disable_caches` (only when torch's compiler is already imported), and
`TORCHINDUCTOR_CACHE_DIR` against `[cache] dir`.

## Why it matters
torch reads the switches once, when `torch._dynamo` is imported: a variable set later in `os.environ` is ignored
silently. And when `[cache] dir` differs from `TORCHINDUCTOR_CACHE_DIR`, torch writes its cache somewhere the
preflight never checked.

## Example
A job that runs `import torch._dynamo` and then `os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"`
(see `tests/contract/test_cache.py`, which runs it in a real subprocess), or:

```toml
[cache]
dir = "/mnt/persist/inductor"   # expect: CC201 (TORCHINDUCTOR_CACHE_DIR is not set to it)
```

## Fix
Export the variables before Python starts, e.g. `export TORCHINDUCTOR_CACHE_DIR=/mnt/persist/inductor` in the
launcher, not `os.environ[...] = ...` after `import torch`.
""")

DIR_NOT_ABSOLUTE = Rule(code="CC202", name="cache-dir-not-absolute", severity="error", doc="""\
## What it does
Reports a relative `TORCHINDUCTOR_CACHE_DIR`.

## Why it matters
A relative cache dir depends on the working directory of each process (torch 2.11 uses it as is, 2.13 makes it
absolute at import): ranks and restarts started from different directories miss each other's cache.

## Example
`TORCHINDUCTOR_CACHE_DIR=cache/inductor compile-contract doctor contract.toml`
(run by `tests/contract/test_cache.py`).

```toml
[cache]
min_free_gib = 1.0   # expect: CC202 (with TORCHINDUCTOR_CACHE_DIR=cache/inductor)
```

## Fix
`export TORCHINDUCTOR_CACHE_DIR=/absolute/path` before Python starts, or set `[cache] dir` (relative paths there
resolve against the contract file).
""")

DIR_UNUSABLE = Rule(code="CC203", name="cache-dir-unusable", severity="error", doc="""\
## What it does
Checks that the cache dir is a directory this process can write, or can be created (its nearest existing parent
is a writable directory).

## Why it matters
Inductor then fails at the first compile, or (for the FX graph cache) silently bypasses the cache and pays the
full compile time on every restart.

## Example
```toml
[cache]
dir = "/proc/inductor-cache"   # expect: CC203
```

## Fix
Point `[cache] dir` / `TORCHINDUCTOR_CACHE_DIR` at a directory the job's user owns, e.g.
`mkdir -p /mnt/persist/inductor`.
""")

NOT_PERSISTENT = Rule(code="CC204", name="cache-dir-not-persistent", severity="error", doc="""\
## What it does
With `require_persistent = true`, reports a cache dir on tmpfs/ramfs (from `/proc/mounts`) or torch's default
`/tmp/torchinductor_<user>`.

## Why it matters
A cache that vanishes on reboot or container restart makes every restart pay the full compile tax, which is
what the persistent cache was meant to prevent.

## Example
```toml
[cache]
require_persistent = true   # expect: CC204 (no dir: torch's default /tmp/torchinductor_<user>)
```

## Fix
Use a directory on persistent storage: `export TORCHINDUCTOR_CACHE_DIR=/mnt/persist/inductor` before Python
starts and set `[cache] dir` to the same path.
""")

NOEXEC = Rule(code="CC205", name="cache-dir-noexec", severity="error", doc="""\
## What it does
Reports a cache dir on a filesystem mounted `noexec` (from `/proc/mounts`).

## Why it matters
Inductor compiles kernels to shared libraries in the cache dir and loads them from there; on a `noexec` mount
loading fails and the compile errors out.

## Example
A cache dir on `mount -o noexec` (run by `tests/contract/test_cache.py` on a real tmpfs when root).

```toml
[cache]
dir = "/mnt/noexec/inductor"   # expect: CC205 (on a noexec mount)
```

## Fix
Move the cache dir to a filesystem mounted without `noexec`.
""")

LOW_SPACE = Rule(code="CC206", name="cache-low-space", severity="error", doc="""\
## What it does
Checks free bytes and free inodes of the cache dir's filesystem (`os.statvfs`, as available to this user) against
`min_free_gib` and `min_free_inodes`. Filesystems that do not report inodes (0 total) skip the inode check.

## Why it matters
Inductor writes many small files per compiled graph: on shared filesystems the inode quota runs out before the
space does, and a full cache dir fails compiles mid-run.

## Example
```toml
[cache]
min_free_gib = 1000000   # expect: CC206
```

## Fix
Free space or inodes (clean old cache entries), move the cache dir, or lower the threshold if the job needs less.
""")

INSECURE = Rule(code="CC207", name="cache-dir-insecure", severity="error", doc="""\
## What it does
Checks the cache dir and every parent, both as written and after resolving symlinks: none may be writable by
other users without the sticky bit, whether through the world bits or through a group that has members other
than this user, the owner and root (from the group database and the users whose primary group it is; a user
private group is fine); the dir must be owned by this user, and no parent may be owned by another user (root
excepted).

## Why it matters
Inductor loads compiled code from this directory. Anyone who can write it, or replace it, can plant code that
the job will run with its credentials.

## Example
A dir under a world-writable parent without the sticky bit (run by `tests/contract/test_cache.py` with real
permissions and, as root, a real second owner).

```toml
[cache]
dir = "/shared/open/inductor"   # expect: CC207 (/shared/open is mode 0777)
```

## Fix
Use a dir owned by the job's user under parents only it (or root) can write: `chmod o-w` (or `chmod g-w` for a
shared group) the parent, or add the sticky bit (`chmod +t`), or move the cache dir.
""")

CACHE_DISABLED = Rule(code="CC208", name="required-cache-disabled", severity="error", doc="""\
## What it does
With `fx_graph_cache = true` / `autograd_cache = true`, reports the FX graph cache / AOTAutograd cache disabled:
by `TORCHINDUCTOR_FX_GRAPH_CACHE=0`, `TORCHINDUCTOR_AUTOGRAD_CACHE=0`, `TORCHINDUCTOR_FORCE_DISABLE_CACHES=1`, or
(when torch's compiler is already imported) by the effective config.

## Why it matters
Without these caches every restart recompiles from scratch: the contract says the job depends on them.

## Example
```toml
[cache]
fx_graph_cache = true   # expect: CC208 (with TORCHINDUCTOR_FX_GRAPH_CACHE=0)
```

## Fix
Unset the variable (or export it as `1`) before Python starts, or set the contract key to false.
""")

REMOTE_DOWN = Rule(code="CC209", name="remote-cache-unreachable", severity="error", doc="""\
## What it does
With `remote = "redis://host:port"`, connects to the Redis server (short timeout, TLS for `rediss://`, `AUTH`
when the URL has a password, `AUTH user password` for an ACL user: `redis://user:pass@host:port`) and expects
`PONG` to a `PING`.

## Why it matters
Every rank would otherwise start by timing out against the remote cache and compile from scratch, which is the
thundering-herd compile the remote cache exists to prevent.

## Example
```toml
[cache]
remote = "redis://127.0.0.1:1"   # expect: CC209
```

## Fix
Start the Redis server or correct host and port in `remote`; check firewalls between the job and the server.
""")

REMOTE_UNUSED = Rule(code="CC210", name="remote-cache-not-used", severity="warning", doc="""\
## What it does
With `remote` set, warns when torch will not use that server: `TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE` is not `1`
(the remote cache is off by default outside Meta), the `redis` Python package is missing, or
`TORCHINDUCTOR_REDIS_URL` / `_HOST` / `_PORT` point elsewhere.

## Why it matters
The contract promises a shared compile cache, but every rank would compile on its own.

## Example
```toml
[cache]
remote = "redis://127.0.0.1:1"   # expect: CC209, CC210
```

## Fix
`export TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1 TORCHINDUCTOR_REDIS_URL=<the remote URL>` before Python starts and
`pip install redis`.
""")

RULES = (ENV_NOT_EFFECTIVE, DIR_NOT_ABSOLUTE, DIR_UNUSABLE, NOT_PERSISTENT, NOEXEC, LOW_SPACE, INSECURE,
         CACHE_DISABLED, REMOTE_DOWN, REMOTE_UNUSED)

SWITCHES = {
    "fx_graph_cache": (("TORCHINDUCTOR_FX_GRAPH_CACHE",), True),
    "autograd_cache": (("TORCHINDUCTOR_AUTOGRAD_CACHE",), True),
    "force_disable_caches": (("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES"), False),
}
"""Effective switch -> (the variables torch reads for it, first one set wins; its default), torch 2.11-2.13."""
CACHE_NAMES = {"fx_graph_cache": "FX graph cache", "autograd_cache": "AOTAutograd cache"}
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


def check(ctx: Any, *, environ: Mapping[str, str] | None = None, timeout_s: float = 1.0) -> list[Finding]:
    """Every cache check for the contract's `[cache]` (current environment unless one is injected)."""
    environ = os.environ if environ is None else environ
    spec = ctx.contract.cache
    switches = _effective_switches()
    out = _too_late(environ, switches)
    cache_dir = resolve_dir(ctx.contract, ctx.snapshot, environ)
    out += _dir_mismatch(cache_dir, environ)
    out += check_dir(cache_dir, spec)
    out += _disabled(spec, environ, switches)
    if spec.remote:
        out += check_remote(spec.remote, timeout_s) + _remote_unused(spec.remote, environ, switches)
    return out


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


def _effective_switches() -> dict[str, bool] | None:
    """The compiler's effective cache switches, only when it is already imported (never import it just to look)."""
    if not compiler_imported():
        return None
    from contract import _torch

    return _torch.cache_switches()


def _env_switch(name: str, environ: Mapping[str, str]) -> tuple[str, bool] | None:
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
        found = _env_switch(name, environ)
        if found and found[1] != switches[name]:
            var = found[0]
            out.append(ENV_NOT_EFFECTIVE.finding(var, f"{var}={environ[var]} is ignored: torch's {name} is "
                                                 f"{switches[name]} (the variable was set after torch._dynamo was imported)",
                                                 f"export {var}={environ[var]} before python starts, not in os.environ after import"))
    return out


def _dir_mismatch(cache_dir: CacheDir, environ: Mapping[str, str]) -> list[Finding]:
    """CC201: torch writes to TORCHINDUCTOR_CACHE_DIR (or its default), which must be the contract's dir."""
    if cache_dir.source != "cache.dir":
        return []
    now = environ.get(CACHE_DIR_VAR)
    used = os.path.abspath(now) if now else default_cache_dir()
    if os.path.realpath(used) == os.path.realpath(cache_dir.path):
        return []
    return [ENV_NOT_EFFECTIVE.finding(CACHE_DIR_VAR, f"torch will use {used}, not [cache] dir {cache_dir.path}",
                                      f"export {CACHE_DIR_VAR}={cache_dir.path} before python starts")]


def check_dir(cache_dir: CacheDir, spec: Any) -> list[Finding]:
    """CC202-CC207 on one cache dir."""
    out = []
    if not os.path.isabs(cache_dir.raw) and cache_dir.source == CACHE_DIR_VAR:
        out.append(DIR_NOT_ABSOLUTE.finding(CACHE_DIR_VAR, f"{CACHE_DIR_VAR}={cache_dir.raw} is relative to the "
                                            "working directory", f"export {CACHE_DIR_VAR}={cache_dir.path} before python starts"))
    if "\0" in cache_dir.path:
        return out + [DIR_UNUSABLE.finding(_label(cache_dir), "the cache dir contains a NUL byte",
                                           "use a plain absolute path")]
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
        return DIR_UNUSABLE.finding(where, f"{what}: {existing} is not a directory", "point the cache dir at a directory")
    if existing == cache_dir.path and not os.access(existing, os.W_OK | os.X_OK | os.R_OK):
        return DIR_UNUSABLE.finding(where, f"{what} is not writable by uid {os.geteuid()}",
                                    "chown the dir to the job's user, or use a dir it owns")
    if existing != cache_dir.path and not os.access(existing, os.W_OK | os.X_OK):
        return DIR_UNUSABLE.finding(where, f"{what} does not exist and {existing} is not writable to create it",
                                    f"mkdir -p {cache_dir.path} as the job's user, or use a dir it owns")
    return None


def _label(cache_dir: CacheDir) -> str:
    """How a message names the dir: by where it came from."""
    return {"cache.dir": "[cache] dir", CACHE_DIR_VAR: CACHE_DIR_VAR, "default": "torch's default cache dir"}[cache_dir.source]


def mount_of(path: str, mounts_file: str = "/proc/mounts") -> tuple[str, str, frozenset[str]]:
    """(mount point, fs type, options) of the mount containing a real path, from the kernel's mount table."""
    best = ("/", "", frozenset())
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
        return [NOT_PERSISTENT.finding(cache_dir.path, f"{_label(cache_dir)} {cache_dir.path} is torch's default "
                                       "temporary dir", fix)]
    if mount[1] in VOLATILE_FS:
        return [NOT_PERSISTENT.finding(cache_dir.path, f"{_label(cache_dir)} is on {mount[1]} ({mount[0]}), lost on "
                                       "restart", fix)]
    return []


def _noexec(cache_dir: CacheDir, mount: tuple[str, str, frozenset[str]]) -> list[Finding]:
    """CC205: Inductor loads the shared libraries it compiles from the cache dir."""
    if "noexec" not in mount[2]:
        return []
    return [NOEXEC.finding(cache_dir.path, f"{_label(cache_dir)} is on {mount[0]}, mounted noexec: compiled "
                           "kernels cannot be loaded", "move the cache dir to a filesystem mounted without noexec")]


def _space(cache_dir: CacheDir, existing: str, spec: Any) -> list[Finding]:
    """CC206 from statvfs (space and inodes available to unprivileged users)."""
    try:
        st = os.statvfs(existing)
    except OSError:
        return []
    out = []
    free = st.f_bavail * st.f_frsize
    if free < spec.min_free_gib * GIB:
        out.append(LOW_SPACE.finding(cache_dir.path, f"{free / GIB:.2f} GiB free, below min_free_gib = "
                                     f"{spec.min_free_gib:g}", "free space, move the cache dir, or lower cache.min_free_gib"))
    if st.f_files > 0 and st.f_favail < spec.min_free_inodes:
        out.append(LOW_SPACE.finding(cache_dir.path, f"{st.f_favail} free inodes, below min_free_inodes = "
                                     f"{spec.min_free_inodes}", "delete old cache entries, move the cache dir, or lower "
                                     "cache.min_free_inodes"))
    return out


def insecure(path: str, uid: int | None = None) -> list[Finding]:
    """CC207 over the dir and its parents, as written and with symlinks resolved."""
    uid = os.geteuid() if uid is None else uid
    out = []
    for p in _prefixes(path):
        problem = _unsafe(p, is_dir=p in (path, os.path.realpath(path)), uid=uid)
        if problem:
            out.append(INSECURE.finding(p, problem[0], problem[1]))
    return out


def _prefixes(path: str) -> list[str]:
    """Existing ancestors of the path as written and of its real path, deduplicated, nearest last."""
    seen: list[str] = []
    for base in (os.path.normpath(path), os.path.realpath(path)):
        p = base
        chain = []
        while True:
            if os.path.exists(p):
                chain.append(p)
            if os.path.dirname(p) == p:
                break
            p = os.path.dirname(p)
        seen += [c for c in reversed(chain) if c not in seen]
    return seen


def _unsafe(path: str, *, is_dir: bool, uid: int) -> tuple[str, str] | None:
    """(why someone else could write or replace this dir, the fix), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    open_to_new_files = is_dir or not st.st_mode & stat.S_ISVTX
    sticky = "" if not st.st_mode & stat.S_ISVTX else " (the sticky bit does not stop new files)"
    if st.st_mode & stat.S_IWOTH and open_to_new_files:
        return (f"writable by every user (mode {mode:04o}){sticky}: others can plant code",
                f"chmod o-w {path} (or chmod +t), chown it to the job's user, or move the cache dir")
    others = group_others(st.st_gid, exclude={uid, st.st_uid}) if st.st_mode & stat.S_IWGRP and open_to_new_files else []
    if others:
        shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        return (f"writable by group {_group_name(st.st_gid)} (mode {mode:04o}){sticky}, whose members include "
                f"{shown}: they can plant code", f"chmod g-w {path} (or chmod +t), chgrp it to a group only the "
                f"job's user is in, or move the cache dir")
    if is_dir and st.st_uid != uid:
        return (f"owned by uid {st.st_uid}, not this process's uid {uid}: that user can plant code",
                f"chown {path} to the job's user, or move the cache dir")
    if not is_dir and st.st_uid not in (uid, 0):
        return (f"parent owned by uid {st.st_uid}: that user can replace the cache dir",
                f"chown {path} to the job's user or root, or move the cache dir")
    return None


def group_others(gid: int, *, exclude: set[int]) -> list[str]:
    """Users of group `gid` (listed members and users whose primary group it is), root and `exclude` left out.

    A user private group (only its owner) gives none: group-writable is then as private as owner-writable.
    """
    try:
        names = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        names = set()
    names |= {pw.pw_name for pw in pwd.getpwall() if pw.pw_gid == gid}
    return sorted(name for name in names if _uid_of(name) not in exclude | {0})


def _uid_of(name: str) -> int:
    """A user's uid (0, i.e. left out, for a listed member that is not a user: it cannot log in)."""
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return 0


def _group_name(gid: int) -> str:
    """`name (gid N)` for messages, the bare gid when the group database has no entry."""
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def _disabled(spec: Any, environ: Mapping[str, str], switches: dict[str, bool] | None) -> list[Finding]:
    """CC208: a cache the contract requires is off (effective config when loaded, else predicted from env)."""
    out = []
    for name, label in CACHE_NAMES.items():
        if not getattr(spec, name):
            continue
        where = _why_off(name, environ, switches)
        if where:
            out.append(CACHE_DISABLED.finding(where, f"the {label} is disabled, but [cache] {name} = true requires it",
                                              _disabled_fix(where, name)))
    return out


def _why_off(name: str, environ: Mapping[str, str], switches: dict[str, bool] | None) -> str | None:
    """What turns the cache off (a variable or a config key), or None when it is on."""
    for key in ("force_disable_caches", name):
        found = _env_switch(key, environ)
        if found and found[1] == (key == "force_disable_caches"):
            if switches is None or switches[key] == found[1]:
                return found[0]
    if switches is None:
        return None
    if switches["force_disable_caches"]:
        return "torch.compiler.config.force_disable_caches"
    if not switches[name]:
        return {"fx_graph_cache": "torch._inductor.config.fx_graph_cache",
                "autograd_cache": "torch._functorch.config.enable_autograd_cache"}[name]
    return None


def _disabled_fix(where: str, name: str) -> str:
    if where.startswith("TORCH"):
        return f"unset {where} before python starts, or set [cache] {name} = false"
    return f"do not turn {where} off in code, or set [cache] {name} = false"


@dataclass(frozen=True, kw_only=True)
class RedisAddress:
    """Where a `redis://` URL points and how to authenticate there."""

    host: str
    """Host name or address (default `localhost`)."""
    port: int
    """TCP port (default 6379)."""
    username: str | None = None
    """ACL user from the URL (`redis://user:pass@...`); None for the default user."""
    password: str | None = None
    """Password from the URL, if any."""
    tls: bool = False
    """True for `rediss://`."""


def redis_address(url: str) -> RedisAddress:
    """Parse `redis[s]://[[user]:pass@]host[:port][/db]` (raises ValueError for a bad port)."""
    parts = urlsplit(url)
    return RedisAddress(host=parts.hostname or "localhost", port=parts.port or 6379,
                        username=unquote(parts.username) if parts.username else None,
                        password=unquote(parts.password) if parts.password else None, tls=parts.scheme == "rediss")


def check_remote(url: str, timeout_s: float = 1.0) -> list[Finding]:
    """CC209: a real PING over RESP (TLS for rediss://, AUTH [user] password when the URL has a password)."""
    try:
        addr = redis_address(url)
    except ValueError as exc:
        return [REMOTE_DOWN.finding("cache.remote", f"cannot parse {url!r}: {exc}", 'write it as "redis://host:port"')]
    problem = ping_redis(addr.host, addr.port, username=addr.username, password=addr.password, tls=addr.tls,
                         timeout_s=timeout_s)
    if problem is None:
        return []
    return [REMOTE_DOWN.finding("cache.remote", f"Redis at {addr.host}:{addr.port} does not answer: {problem}",
                                f"start Redis on {addr.host}:{addr.port} or correct cache.remote; check the network path")]


def ping_redis(host: str, port: int, *, password: str | None = None, username: str | None = None, tls: bool = False,
               timeout_s: float = 1.0) -> str | None:
    """None when the server answers PONG, else why not (one line); `AUTH user pass` for an ACL user."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as raw:
            sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host) if tls else raw
            if password is not None:
                sock.sendall(_resp("AUTH", *((username,) if username else ()), password))
                reply = _read_line(sock)
                if not reply.startswith(b"+OK"):
                    return f"AUTH refused ({reply.decode(errors='replace')[:80]})"
            sock.sendall(_resp("PING"))
            reply = _read_line(sock)
    except (OSError, ValueError) as exc:  # ValueError: a host name that does not encode (IDNA)
        return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
    if reply.startswith(b"+PONG"):
        return None
    return f"unexpected reply {reply.decode(errors='replace')[:80]!r}"


def _resp(*args: str) -> bytes:
    """A RESP array of bulk strings, the Redis wire format for a command."""
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        data = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_line(sock: socket.socket, limit: int = 4096) -> bytes:
    """One CRLF-terminated reply line (simple string or error)."""
    buf = b""
    while not buf.endswith(b"\r\n") and len(buf) < limit:
        chunk = sock.recv(limit - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf.strip()


def _remote_unused(url: str, environ: Mapping[str, str], switches: dict[str, bool] | None) -> list[Finding]:
    """CC210: reasons torch would not use the configured Redis at all."""
    import importlib.util

    fix = f"export TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1 TORCHINDUCTOR_REDIS_URL={url} before python starts"
    out = []
    if importlib.util.find_spec("redis") is None:
        out.append(REMOTE_UNUSED.finding("cache.remote", "the redis Python package is not installed; torch needs it "
                                         "for the remote cache", "pip install redis"))
    enabled = switches["fx_graph_remote_cache"] if switches else environ.get("TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE") == "1"
    if not enabled:
        out.append(REMOTE_UNUSED.finding("TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE", "the remote FX graph cache is off "
                                         "(it is off by default outside Meta)", fix))
        return out
    target = _torch_redis_target(environ)
    try:
        wanted = _host_port(redis_address(url))
    except ValueError:
        return out  # CC209 already reports the unparsable URL
    if target != wanted:
        out.append(REMOTE_UNUSED.finding("TORCHINDUCTOR_REDIS_URL", f"torch would connect to {target[0]}:{target[1]}, "
                                         f"not {url}", fix))
    return out


def _torch_redis_target(environ: Mapping[str, str]) -> tuple[str, int]:
    """Where torch's Redis backend connects: TORCHINDUCTOR_REDIS_URL, else _HOST/_PORT (default localhost:6379)."""
    if environ.get("TORCHINDUCTOR_REDIS_URL"):
        try:
            return _host_port(redis_address(environ["TORCHINDUCTOR_REDIS_URL"]))
        except ValueError:
            return environ["TORCHINDUCTOR_REDIS_URL"], -1
    try:
        port = int(environ.get("TORCHINDUCTOR_REDIS_PORT", "6379"))
    except ValueError:
        port = -1
    return environ.get("TORCHINDUCTOR_REDIS_HOST", "localhost"), port


def _host_port(addr: RedisAddress) -> tuple[str, int]:
    """Where an address connects; credentials do not change which server torch talks to."""
    return addr.host, addr.port
