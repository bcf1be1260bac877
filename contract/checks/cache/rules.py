"""CC2xx rules: the Inductor cache preflight, from `[cache]` (checks in `check`, `dirs`, `remote`)."""

from __future__ import annotations

from contract.findings import Rule

ENV_NOT_EFFECTIVE = Rule(
    code="CC201",
    name="cache-env-not-effective",
    severity="error",
    doc="""\
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
(see `tests/checks/cache/test_cache.py`, which runs it in a real subprocess), or:

```toml
[cache]
dir = "/mnt/persist/inductor"   # expect: CC201 (TORCHINDUCTOR_CACHE_DIR is not set to it)
```

## Fix
Export the variables before Python starts, e.g. `export TORCHINDUCTOR_CACHE_DIR=/mnt/persist/inductor` in the
launcher, not `os.environ[...] = ...` after `import torch`.
""",
)

DIR_NOT_ABSOLUTE = Rule(
    code="CC202",
    name="cache-dir-not-absolute",
    severity="error",
    doc="""\
## What it does
Reports a relative `TORCHINDUCTOR_CACHE_DIR`.

## Why it matters
A relative cache dir depends on the working directory of each process (torch 2.11 uses it as is, 2.13 makes it
absolute at import): ranks and restarts started from different directories miss each other's cache.

## Example
`TORCHINDUCTOR_CACHE_DIR=cache/inductor compile-contract doctor contract.toml`
(run by `tests/checks/cache/test_cache.py`).

```toml
[cache]
min_free_gib = 1.0   # expect: CC202 (with TORCHINDUCTOR_CACHE_DIR=cache/inductor)
```

## Fix
`export TORCHINDUCTOR_CACHE_DIR=/absolute/path` before Python starts, or set `[cache] dir` (relative paths there
resolve against the contract file).
""",
)

DIR_UNUSABLE = Rule(
    code="CC203",
    name="cache-dir-unusable",
    severity="error",
    doc="""\
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
""",
)

NOT_PERSISTENT = Rule(
    code="CC204",
    name="cache-dir-not-persistent",
    severity="error",
    doc="""\
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
""",
)

NOEXEC = Rule(
    code="CC205",
    name="cache-dir-noexec",
    severity="error",
    doc="""\
## What it does
Reports a cache dir on a filesystem mounted `noexec` (from `/proc/mounts`).

## Why it matters
Inductor compiles kernels to shared libraries in the cache dir and loads them from there; on a `noexec` mount
loading fails and the compile errors out.

## Example
A cache dir on `mount -o noexec` (run by `tests/checks/cache/test_cache.py` on a real tmpfs when root).

```toml
[cache]
dir = "/mnt/noexec/inductor"   # expect: CC205 (on a noexec mount)
```

## Fix
Move the cache dir to a filesystem mounted without `noexec`.
""",
)

LOW_SPACE = Rule(
    code="CC206",
    name="cache-low-space",
    severity="error",
    doc="""\
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
""",
)

INSECURE = Rule(
    code="CC207",
    name="cache-dir-insecure",
    severity="error",
    doc="""\
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
A dir under a world-writable parent without the sticky bit (run by `tests/checks/cache/test_cache.py` with real
permissions and, as root, a real second owner).

```toml
[cache]
dir = "/shared/open/inductor"   # expect: CC207 (/shared/open is mode 0777)
```

## Fix
Use a dir owned by the job's user under parents only it (or root) can write: `chmod o-w` (or `chmod g-w` for a
shared group) the parent, or add the sticky bit (`chmod +t`), or move the cache dir.
""",
)

CACHE_DISABLED = Rule(
    code="CC208",
    name="required-cache-disabled",
    severity="error",
    doc="""\
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
""",
)

REMOTE_DOWN = Rule(
    code="CC209",
    name="remote-cache-unreachable",
    severity="error",
    doc="""\
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
""",
)

REMOTE_UNUSED = Rule(
    code="CC210",
    name="remote-cache-not-used",
    severity="warning",
    doc="""\
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
""",
)

RULES = (
    ENV_NOT_EFFECTIVE,
    DIR_NOT_ABSOLUTE,
    DIR_UNUSABLE,
    NOT_PERSISTENT,
    NOEXEC,
    LOW_SPACE,
    INSECURE,
    CACHE_DISABLED,
    REMOTE_DOWN,
    REMOTE_UNUSED,
)
