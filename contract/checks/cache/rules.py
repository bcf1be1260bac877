"""CC2xx rules: the Inductor cache preflight, from `[cache]` (checks in `check`, `dirs`, `remote`, `artifacts`)."""

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
remote = "redis://:secret@127.0.0.1:1"   # expect: CC209
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
remote = "redis://:secret@127.0.0.1:1"   # expect: CC209, CC210
```

## Fix
`export TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1 TORCHINDUCTOR_REDIS_URL=<the remote URL>` before Python starts and
`pip install redis`.
""",
)

ARTIFACTS_INSECURE = Rule(
    code="CC211",
    name="cache-artifacts-insecure",
    severity="error",
    doc="""\
## What it does
Checks the `[cache] artifacts` file before a byte of it is read: it must be a regular file (a symlink is followed
and its target checked) owned by this user or root and writable by nobody else (not by every user, not by a group
with other members); every directory above it, as written and after resolving symlinks, gets the cache dir's parent
rule (CC207: not writable by others without the sticky bit, owned by this user or root). `enforce` then opens the
file without following a last symlink and checks the open file again, so a swap in between is refused too. In
`check` and `doctor` as in `enforce`, which refuses without reading the file.

## Why it matters
`torch.compiler.load_cache_artifacts()` deserializes compiled code (Inductor's generated Python modules and
kernels, as pickles) that the engine then runs: torch 2.13 unpickles part of it while loading, and every version
(2.14 and 2.15 included) writes it into the cache dir, where the next compile of each key unpickles it. Whoever can
write the file runs code in every rank of the job.

## Example
An artifacts file with mode 0666, or owned by another user (run by `tests/checks/cache/test_trust.py` with real
modes and, as root, a real second owner).

```toml
[cache]
artifacts = "open-artifacts.bin"   # expect: CC211 (mode 0666)
```

## Fix
`chmod go-w` the file (or its directory), `chown` it to the job's user, check it is the file `compile-contract warm`
saved, and pin it: `artifacts_sha256` (`compile-contract warm CONTRACT --pin`).
""",
)

ARTIFACTS_DIGEST = Rule(
    code="CC212",
    name="cache-artifacts-digest-mismatch",
    severity="error",
    doc="""\
## What it does
With `[cache] artifacts_sha256`, hashes the bytes of the artifacts file (the same bytes `enforce` would hand to
torch) and compares them with the pin.

## Why it matters
The checksum inside the file only detects accidents: anyone who can change the file can recompute it. The pin,
kept in the contract (reviewed and shipped with the code, not a sidecar next to the artifacts), says which compiled
code this engine may run; any other file is refused before torch reads it.

## Example
```toml
[cache]
artifacts = "CC212_artifacts.bin"
artifacts_sha256 = "0000000000000000000000000000000000000000000000000000000000000000"   # expect: CC212
```

## Fix
Restore the artifacts shipped with this contract. If you rebuilt them yourself, pin the new file:
`compile-contract warm CONTRACT --pin` writes its digest into the contract.
""",
)

ARTIFACTS_UNPINNED = Rule(
    code="CC213",
    name="cache-artifacts-unpinned",
    severity="warning",
    doc="""\
## What it does
With `--strict` only (hardened deployments), reports a `[cache] artifacts` file without `artifacts_sha256`, and
`enforce` does not load it.

## Why it matters
Without a pin, `enforce` loads whatever compiled code is at that path when the process starts; the permission check
(CC211) stops other users, not a wrong or stale file from a trusted one (a copy step, a shared volume, a CI cache).

## Example
`compile-contract check contract.toml --strict` with

```toml
[cache]
artifacts = "warm.bin"   # expect: CC213 (no artifacts_sha256)
```

## Fix
Pin the file you shipped: `compile-contract warm CONTRACT --pin` writes `artifacts_sha256`, or copy the digest
`warm` prints into `[cache]`.
""",
)

REMOTE_INSECURE = Rule(
    code="CC214",
    name="remote-cache-insecure",
    severity="warning",
    doc="""\
## What it does
Reads the remote cache's URL (`[cache] remote`, and `TORCHINDUCTOR_REDIS_URL` / `_HOST` / `_PORT` when a remote
cache switch is on without one) and warns when it is plain `redis://` to a host that is not loopback (`127.0.0.0/8`,
`::1`, `localhost`), when it has no password (torch's `_HOST`/`_PORT` form never has one), or when TLS certificate
checks are off (`ssl_cert_reqs=none`). Nothing is sent: the URL alone decides. The password is never echoed.

## Why it matters
Torch unpickles what it reads from the remote cache (FX-graph, AOTAutograd and PGO entries): whoever can write an
entry runs code in every rank that reads it. Without a password anyone who can reach the port can write entries;
over plain `redis://` anyone on the network path can read the password and rewrite entries in flight.

## Example
```toml
[cache]
remote = "redis://127.0.0.1:1"   # expect: CC209, CC210, CC214 (no password)
```

## Fix
`rediss://user:password@host:port` (TLS and AUTH: `requirepass` or an ACL user on the server), reachable only from
the job's hosts; on one host, `redis://:password@127.0.0.1:port` is enough.
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
    ARTIFACTS_INSECURE,
    ARTIFACTS_DIGEST,
    ARTIFACTS_UNPINNED,
    REMOTE_INSECURE,
)
