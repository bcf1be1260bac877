"""CC7xx rules: warm starts, predicted against the warm manifest `compile-contract warm` wrote (checks in `check`).

Every rule is a warning by default and an error with `[cache] require_warm = true` where the prediction is certain
(the component enters the cache keys, or the entries are provably absent); a component that only may change the
keys stays a warning.
"""

from __future__ import annotations

from contract.findings import Rule

MANIFEST_UNREADABLE = Rule(
    code="CC701",
    name="warm-manifest-unreadable",
    severity="warning",
    doc="""\
## What it does
Reads `[cache] manifest` and reports a file that is not a valid warm manifest: not JSON, another format version,
or a structure this version of the checker does not know.

## Why it matters
Without a readable manifest nothing can say whether this start will find its compiled code in the cache, or what
compiling cold will cost. With `require_warm = true` the start is refused: warmth cannot be shown.

## Example
```toml
[cache]
manifest = "CC701_manifest.json"   # expect: CC701 (the file is not JSON)
```

## Fix
Run `compile-contract warm CONTRACT` again to write a fresh manifest (it is written atomically).
""",
)

MANIFEST_MISSING = Rule(
    code="CC702",
    name="warm-manifest-missing",
    severity="warning",
    doc="""\
## What it does
Reports a `[cache] manifest` path with no file behind it, and `require_warm = true` without any `[cache] manifest`.

## Why it matters
The manifest is what the startup compares with to predict a cold start; without one every start is a guess.

## Example
```toml
[cache]
manifest = "never-written.json"   # expect: CC702
```

## Fix
Run `compile-contract warm CONTRACT` once on a host with the production settings (it compiles every region with
the real backend and writes the manifest), and ship the manifest with the contract.
""",
)

ENVIRONMENT_CHANGED = Rule(
    code="CC703",
    name="cold-start-environment-changed",
    severity="warning",
    doc="""\
## What it does
Compares every component the cache keys depend on with the manifest: torch (version and git revision), triton,
the GPU and CUDA version (as Inductor's system info records them), Python, `cache_key_tag`, the CPU thread count
Inductor hashes for CPU kernels, Inductor's portable config (in every FX-graph key), functorch's config (in every
AOTAutograd key), Dynamo's config, and (in `doctor`) the compiler's environment variables. Each difference is one
finding naming the component, both values and the cold-compile cost the manifest recorded.

## Why it matters
A restart that should take seconds from the cache compiles everything again after a torch upgrade, one changed
Inductor option or a different GPU, on every rank, and nothing says why. Knowing it at startup turns a mystery
into a line in the launcher's log, or a refusal for serving replicas (`require_warm = true`).

## Example
```toml
[cache]
manifest = "CC703_manifest.json"   # expect: CC703 (recorded with torch 1.0.0)
```

## Fix
Start with the environment the manifest was written with, or accept the cold start and write a new manifest
(`compile-contract warm CONTRACT`) for the new environment.
""",
)

REGION_CHANGED = Rule(
    code="CC704",
    name="cold-start-region-changed",
    severity="warning",
    doc="""\
## What it does
Compares each region's compile settings (backend, mode, options, dynamic, dynamic dims, methods) and a hash of the
source of the user classes its instances are made of (and the module functions they call) with the manifest.

## Why it matters
Changed settings change that region's cache keys for certain; changed code usually changes the traced graph, so
the region compiles cold while the others stay warm. A source change is only a warning: a comment does not change
the graph (the monitor's `cold_compile` event then says what did).

## Example
```toml
[cache]
manifest = "CC704_manifest.json"   # expect: CC704 (recorded with other source and settings)
```

## Fix
Expected after a code or contract change: write a new manifest with `compile-contract warm CONTRACT` once the
change ships.
""",
)

ENTRIES_MISSING = Rule(
    code="CC705",
    name="cold-start-cache-entries-missing",
    severity="warning",
    doc="""\
## What it does
Looks up the FX-graph and AOTAutograd keys the manifest recorded in the cache dir this start uses
(`fxgraph/<key[1:3]>/<key>`, `aotautograd/<key>`), unless a remote cache or the portable artifacts will supply
them. Reported only when nothing in the environment changed the keys (CC703 reports that cause instead).

## Why it matters
The same keys on an empty or different cache dir (a wiped `/tmp`, a new host, a per-job directory) mean a cold
start just as surely as a changed key.

## Example
```toml
[cache]
manifest = "CC705_manifest.json"   # expect: CC705 (its keys are in no cache)
```

## Fix
Point `TORCHINDUCTOR_CACHE_DIR` at the directory `warm` filled, configure `[cache] artifacts` so `enforce` loads
the compiled code before anything compiles, or use a remote cache.
""",
)

PGO_STATE_MISSING = Rule(
    code="CC706",
    name="pgo-state-missing",
    severity="warning",
    doc="""\
## What it does
When the warm run had profile-guided dynamic-shape state (`torch.compiler.config.job_id` /
`TORCH_COMPILE_JOB_ID`, written to `{cache_dir}/dynamo/code_state_<job>_<rank>_<tag>.pkl`), checks that this start
uses the same job id and finds the state file.

## Why it matters
With the state, Dynamo compiles a frame whose sizes changed as dynamic at once; without it the restart compiles
it static first and again dynamic after the first size change: twice, and the static graph was never cached.

## Example
```toml
[cache]
manifest = "CC706_manifest.json"   # expect: CC706 (recorded with job id warm-job; none set now)
```

## Fix
Export the same `TORCH_COMPILE_JOB_ID` the warm run used, and keep the cache dir's `dynamo/` folder (or ship the
portable artifacts, which carry it).
""",
)

ARTIFACTS_NOT_LOADED = Rule(
    code="CC707",
    name="cache-artifacts-not-loaded",
    severity="warning",
    doc="""\
## What it does
Checks the `[cache] artifacts` file exists and, once it passed CC211 and CC212, that it is a cache-artifacts file
torch can load: the container is read in pure Python (checksum, format version, lengths, artifact types, keys
that stay inside the cache dir, and entries that are complete pickles, walked without running them, or JSON), so a
damaged or foreign file is this one finding and torch never prints a traceback over it. `enforce` then loads it with `torch.compiler.load_cache_artifacts()` before anything compiles
(torch's own warnings captured, not printed) and reports a load that raised, wrote nothing, or wrote fewer keys
than the manifest recorded.

## Why it matters
Artifacts are how one host warms a fleet whose local caches are empty. A missing file or a failed load is silent
in torch: the start simply compiles cold.

## Example
```toml
[cache]
artifacts = "never-saved.bin"   # expect: CC707
```

## Fix
Run `compile-contract warm CONTRACT` (it saves the artifacts next to the manifest) and ship the file; rerun it
after a torch upgrade (artifacts are keyed like the caches).
""",
)

KERNELS_REFUSED = Rule(
    code="CC708",
    name="kernel-pack-refused",
    severity="warning",
    doc="""\
## What it does
On CPU, `compile-contract warm` ships the C++ kernels its compiles built (Inductor's `<cache_dir>/<2 chars>/*.so`,
which torch's portable artifacts do not carry) in a kernel pack beside `[cache] artifacts`
(`<artifacts>.kernels`), and records it in the warm manifest (`kernels`: bytes, sha256 of the pack and of every
file). Before anything compiles, `enforce` installs it into the cache dir, but only a pack that is there, passes
the owner and mode rules of the artifacts (CC211), has the sha256 the manifest recorded, is a zip of regular files
named `<2 chars>/<name>.so` (no `..`, no absolute path, no link, no directory, no duplicate) whose files all have
the recorded sizes and digests. This rule reports a pack that fails any of that; nothing of it is written.

## Why it matters
The pack holds native code that runs when torch dlopens it: a file swapped, damaged or shipped from another warm
run must never reach the cache dir. A refused pack is safe but slow: this start builds every C++ kernel again
(seconds per kernel, which is most of a CPU start once the graphs come from the artifacts).

## Example
```toml
[cache]
manifest = "warm.json"
artifacts = "warm.bin"   # expect: CC708 (warm.bin.kernels has another sha256 than warm.json records)
```

## Fix
Ship the `<artifacts>.kernels` file written by the same `compile-contract warm` run as the manifest (run it again
and ship all three files); if a file was tampered with, find out who could write it.
""",
)

KERNELS_OTHER_HOST = Rule(
    code="CC709",
    name="kernel-pack-other-host",
    severity="warning",
    doc="""\
## What it does
Compares the host the kernel pack was built on (recorded in the manifest's `kernels.host`: CPU architecture, the
CPU's feature flags, the C library, the C++ compiler's version and torch's version) with this one, and leaves the
pack out where they differ (every other check passed): a CPU missing a feature flag the warm host had, another
compiler, C library or torch.

## Why it matters
Inductor's kernel key hashes the source and the compiler's command line, which says `-march=native` and the ISA
flags but not the CPU model they resolved to, the compiler's version or torch's: a kernel built on a newer CPU could
be loaded under the same key on an older one and stop the process with an illegal instruction. Left out, the
kernels are built here, under the same key, as without a pack.

## Example
```toml
[cache]
manifest = "warm.json"
artifacts = "warm.bin"   # expect: CC709 (warm.json's kernels were built on a CPU with avx512fp16)
```

## Fix
Run `compile-contract warm CONTRACT` on a host of the fleet's CPU model, compiler and torch (one pack per host
type), or accept that this start builds its C++ kernels.
""",
)

RULES = (
    MANIFEST_UNREADABLE,
    MANIFEST_MISSING,
    ENVIRONMENT_CHANGED,
    REGION_CHANGED,
    ENTRIES_MISSING,
    PGO_STATE_MISSING,
    ARTIFACTS_NOT_LOADED,
    KERNELS_REFUSED,
    KERNELS_OTHER_HOST,
)
