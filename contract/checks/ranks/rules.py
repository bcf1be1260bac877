"""CC8xx rules: one startup verdict for all the ranks of a job, and the ranks agreeing on what they compile
(produced by `check`, `agree` and the exchange in `contract/report/exchange`)."""

from __future__ import annotations

from contract.findings import Rule

MISSING_RANK = Rule(
    code="CC801",
    name="rank-did-not-report",
    severity="error",
    doc="""\
## What it does
When the ranks of a job exchange their startup findings (`contract.enforce()` with torch.distributed initialized, or
`compile-contract check`/`doctor` run inside a job), reports every rank that did not publish its findings within
`[distributed] timeout_s`, and a job whose first rank never published the verdict. Every other rank refuses to
start with this finding, within about twice the timeout.

## Why it matters
A rank that crashed or hangs before the exchange would otherwise leave its peers waiting in the first collective
(NCCL's timeout is 10 minutes, gloo's 30) with nothing in any log but a broken connection.

## Example
```text
rank 3: ranks: CC801 rank 3 did not report within 30 s (crashed, stuck, or still starting); 7 of 8 ranks reported
```

## Fix
Read rank 3's own output for why it stopped. If it is only slower to start (loading a checkpoint), call `enforce`
at the same point on every rank or raise `[distributed] timeout_s`.
""",
)

CONTRACT_DIFFERS = Rule(
    code="CC802",
    name="ranks-load-different-contracts",
    severity="error",
    doc="""\
## What it does
Compares the contract document each rank loaded (its SHA-256) and names the ranks whose document differs.

## Why it matters
Ranks that enforce different contracts compile different regions with different settings: different graphs,
different collectives, a hang at the first step.

## Example
```text
ranks 4-7: contract.sha256: CC802 ranks 0-3 loaded 3f2a...; ranks 4-7 loaded 9b1c...
```

## Fix
Ship one contract file to every node (the same path in the job's image or shared filesystem). With pipeline
parallelism, where each stage compiles its own part of the model under its own contract, give `enforce` the group
of the ranks that run the same stage (its data-parallel group): `contract.enforce(stage, path, group=dp_group)`.
""",
)

REGION_DIFFERS = Rule(
    code="CC803",
    name="ranks-compile-regions-differently",
    severity="error",
    doc="""\
## What it does
Compares each region's effective settings (module glob, methods, backend, mode, options, dynamic, budgets) across
ranks, and reports a region a rank has that others lack.

## Why it matters
The same region compiled with different settings on two ranks produces different graphs (different fusions,
different dynamic shapes): collective mismatches and hangs.

## Example
```text
rank 1: region.layers: CC803 rank 0 compiles it with {... "dynamic": "auto" ...}; rank 1 with {... "dynamic": false ...}
```

## Fix
Make the contract and its `[defaults]` the same on every rank; do not derive settings from the rank.
""",
)

VERSION_DIFFERS = Rule(
    code="CC804",
    name="ranks-run-different-versions",
    severity="error",
    doc="""\
## What it does
Compares the versions of torch, its CUDA, triton and Python across ranks.

## Why it matters
Different compiler versions trace and lower the same model differently; Inductor cache keys differ too, so ranks
compile cold at different speeds.

## Example
```text
rank 7: version.torch: CC804 ranks 0-6 run 2.13.0; rank 7 runs 2.11.0
```

## Fix
Use one image (one environment) for every node of the job.
""",
)

CONFIG_DIFFERS = Rule(
    code="CC805",
    name="ranks-configure-the-compiler-differently",
    severity="error",
    doc="""\
## What it does
Compares the compile-relevant Dynamo, Inductor, functorch and `torch.compiler` config values each rank changed from
torch's defaults (set in Python or through an environment variable; keys torch marks as not affecting compiles,
such as compile threads, are left out).

## Why it matters
One rank with `max_autotune` or a different `recompile_limit` compiles different kernels or falls back to eager
at another point than its peers.

## Example
```text
rank 1: config.inductor.max_autotune: CC805 rank 0 has the default; rank 1 has True
```

## Fix
Set compiler config in code every rank runs, before `enforce`, or not at all.
""",
)

ENV_DIFFERS = Rule(
    code="CC806",
    name="ranks-have-different-compile-environment",
    severity="error",
    doc="""\
## What it does
Compares the compile-relevant environment variables (`TORCHINDUCTOR_*`, `TORCHDYNAMO_*`, `TORCH_COMPILE*`) across
ranks. Variables that legitimately differ per rank are declared in `[distributed] per_rank`.

## Why it matters
These variables change what Dynamo traces and what Inductor generates, and they are easy to set on one node only.

## Example
```toml
[distributed]
per_rank = ["env.TORCHINDUCTOR_CACHE_DIR", "cache.dir"]   # a per-node cache dir is expected to differ
```

## Fix
Export the same variables on every node, or list the ones that must differ in `[distributed] per_rank`.
""",
)

CACHE_DIFFERS = Rule(
    code="CC807",
    name="ranks-use-different-cache-policy",
    severity="error",
    doc="""\
## What it does
Compares the effective Inductor cache policy across ranks: the cache directory torch will use, whether the FX-graph
and AOTAutograd caches are on, and the remote cache.

## Why it matters
Ranks with the caches off (or pointed elsewhere) compile cold while their peers load from cache, and wait for each
other at the first collective for the difference; a shared directory on some ranks and a local one on others is
usually a launch-script bug.

## Example
```text
rank 3: cache.fx_graph_cache: CC807 ranks 0-2 have True; rank 3 has False
```

## Fix
Launch every rank with the same cache environment; declare a per-node directory in `[distributed] per_rank`.
""",
)

LOCAL_VERDICT = Rule(
    code="CC808",
    name="verdict-is-local",
    severity="warning",
    doc="""\
## What it does
Warns when `WORLD_SIZE` says the process is one rank of several but torch.distributed is not initialized when
`enforce` runs (and no group is given): the verdict is this rank's alone.

## Why it matters
If another rank refuses to start, this one goes on into its first collective and waits there until the
collective's timeout, with nothing in its log to say why.

## Example
```python
binding = contract.enforce(model, "contract.toml")   # CC808: called before init_process_group
torch.distributed.init_process_group("nccl")
```

## Fix
Call `torch.distributed.init_process_group(...)` first, then `contract.enforce(model, path)` (or pass
`group=`), so every rank starts or refuses together.
""",
)

DYNAMIC_WITHOUT_AGREEMENT = Rule(
    code="CC809",
    name="dynamic-shapes-without-rank-agreement",
    severity="warning",
    doc="""\
## What it does
Warns when a job of several ranks compiles regions with automatic dynamic shapes (`dynamic = "auto"`, the default)
without PyTorch's compiler collectives (`torch._dynamo.config.enable_compiler_collectives`, env
`TORCH_COMPILER_COLLECTIVES=1`), or without a job identity for its profile-guided dynamic-shape state
(`torch.compiler.config.job_id`, env `TORCH_COMPILE_JOB_ID`).

## Why it matters
Each rank decides on its own which dimensions become dynamic, from the shapes it happened to see: ranks that saw
different batch sizes compile different graphs and recompile at different steps, and collectives mismatch. Without
a job id, the state that would let a restart compile once is not kept.

## Example
```toml
[defaults]
dynamic = "auto"   # CC809 on 8 ranks without TORCH_COMPILER_COLLECTIVES=1
```

## Fix
Export `TORCH_COMPILER_COLLECTIVES=1` and `TORCH_COMPILE_JOB_ID=<job>` on every rank, or declare the dynamic
dimensions (`dynamic_dims`, `dynamic = true`) so no rank has to decide.
""",
)

THROUGH_FSDP_SHARDS = Rule(
    code="CC810",
    name="region-compiles-through-fsdp2-shards",
    severity="warning",
    doc="""\
## What it does
Warns when a compiled region's module contains submodules sharded with FSDP2 (`fully_shard`) that its forward calls:
FSDP's pre/post-forward hooks run eager (PyTorch wraps them in `torch._dynamo.disable`), so each call of a sharded
child breaks the region's graph, and a Python loop over the children makes Dynamo skip the whole frame (it runs
eager, counted as a graph-break site).

## Why it matters
A region budgeted for no graph break breaches on its first step, and a whole-model region compiled over sharded
blocks mostly runs eager while looking compiled.

## Example
```toml
[[region]]
name = "model"
module = ""          # CC810: layers.0 ... layers.31 are fully_shard()ed
```

## Fix
Compile each sharded block as its own region (`module = "layers.*"`), as torchtitan does (activation checkpointing,
then per-block compile, then `fully_shard`), and keep the root eager or compile only what lies outside the blocks.
""",
)

RULES: tuple[Rule, ...] = (
    MISSING_RANK,
    CONTRACT_DIFFERS,
    REGION_DIFFERS,
    VERSION_DIFFERS,
    CONFIG_DIFFERS,
    ENV_DIFFERS,
    CACHE_DIFFERS,
    LOCAL_VERDICT,
    DYNAMIC_WITHOUT_AGREEMENT,
    THROUGH_FSDP_SHARDS,
)
