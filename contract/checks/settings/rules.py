"""CC1xx rules: compile settings checked against the installed torch, before anything compiles (checks in `check`)."""

from __future__ import annotations

from contract.env import TESTED_TORCH, torch_range_specifier, torch_range_text
from contract.findings import Rule

_LAST = f"{TESTED_TORCH[1][0]}.{TESTED_TORCH[1][1]}"
_NEXT = f"{TESTED_TORCH[1][0]}.{TESTED_TORCH[1][1] + 1}"
"""The last tested minor and the first untested one after it (the rule's examples use them)."""

UNKNOWN_BACKEND = Rule(
    code="CC101",
    name="unknown-backend",
    severity="error",
    doc="""\
## What it does
Checks each compiled region's `backend` against the backends this torch knows
(`torch.compiler.list_backends(exclude_tags=None)`, which includes custom backends registered by the model's
import and entry-point backends).

## Why it matters
`torch.compile` raises `InvalidBackend` for an unknown name; in an engine that compiles lazily this surfaces
minutes into startup, after weights are loaded.

## Example
```toml
[defaults]
backend = "inductr"   # CC101: did you mean inductor?
```

## Fix
Use one of the listed backends, or register the custom backend (`torch._dynamo.register_backend`) in the module
that builds the model, so it exists when the contract is checked.
""",
)

UNKNOWN_MODE = Rule(
    code="CC102",
    name="unknown-mode",
    severity="error",
    doc="""\
## What it does
Checks `mode` against `torch._inductor.list_mode_options()` for regions compiled with the inductor backend.

## Why it matters
An unknown mode raises `RuntimeError: Unrecognized mode` at `torch.compile()` time; mode names differ between
torch versions (`lite` exists only from 2.13).

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
mode = "reduce_overhead"   # CC102: did you mean reduce-overhead?
```

## Fix
Use one of: default, reduce-overhead, max-autotune-no-cudagraphs, max-autotune (and lite on torch >= 2.13).
""",
)

UNKNOWN_OPTION = Rule(
    code="CC103",
    name="unknown-option",
    severity="error",
    doc="""\
## What it does
Checks every key of `options` against `torch._inductor.list_options()` (`-` is read as `_`, as torch does). An
option written as a dotted key (`options.triton.cudagraphs = true`) is a nested table in TOML, not the option
`triton.cudagraphs`: it is reported with the quoted form to write instead. Suggestions never name private options.

## Why it matters
`torch.compile` raises `RuntimeError: Unexpected optimization option` for a misspelled option; options also come
and go between torch versions.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
options = { max_autotun = true }   # CC103: did you mean max_autotune?
```

## Fix
Use an option name this torch knows (see `torch._inductor.list_options()`), or drop it. Quote names that contain
dots: `options = { "triton.cudagraphs" = true }`.
""",
)

OPTION_TYPE = Rule(
    code="CC104",
    name="option-type",
    severity="error",
    doc="""\
## What it does
Checks each Inductor option's value against the option's declared type, exactly as `torch.compile` does
(`isinstance` against `torch._inductor.config`'s type; generic types such as `int | None` are not checked).

## Why it matters
A wrong type raises `RuntimeError: Unexpected type of attr` at `torch.compile()` time. TOML makes this easy:
`1` is an integer, `1.0` a float, `"true"` a string.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
options = { max_autotune = "true" }   # CC104: got str, should be bool
```

## Fix
Write the value with the option's type: `true`/`false` without quotes for bools, `1.0` for floats.
""",
)

MODE_AND_OPTIONS = Rule(
    code="CC105",
    name="mode-and-options",
    severity="error",
    doc="""\
## What it does
Reports a region that sets both `mode` and `options` (directly or through `[defaults]`).

## Why it matters
`torch.compile` raises "Either mode or options can be specified, but both can't be specified at the same time".

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
mode = "max-autotune"   # CC105
options = { "triton.cudagraphs" = false }
```

## Fix
Keep one: express the mode as options (see `torch._inductor.list_mode_options(mode)`) or drop the options.
""",
)

IGNORED_BY_BACKEND = Rule(
    code="CC106",
    name="ignored-by-backend",
    severity="warning",
    doc="""\
## What it does
Warns when `mode` or `options` are set for a region whose backend ignores them (`eager`, `aot_eager`).

## Why it matters
torch passes them to the backend, which silently drops them: the contract claims an optimization that never
happens (often left over from switching backends while debugging).

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
backend = "eager"
mode = "max-autotune"   # CC106
```

## Fix
Remove `mode`/`options`, or switch the region to `backend = "inductor"`.
""",
)

CUDAGRAPHS_DYNAMIC = Rule(
    code="CC107",
    name="cudagraphs-with-dynamic-shapes",
    severity="warning",
    doc="""\
## What it does
Warns when a region uses CUDA graphs (`mode = "reduce-overhead"` or `"max-autotune"`,
`options."triton.cudagraphs" = true`, or `backend = "cudagraphs"`) together with `dynamic = true` or
`dynamic_dims`.

## Why it matters
A CUDA graph is recorded per distinct shape: shapes that change every step re-record graphs every step, costing
memory and latency instead of saving them.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
mode = "reduce-overhead"
dynamic = true   # CC107
```

## Fix
Pad or bucket inputs to a few static shapes and set `dynamic = false`, or drop CUDA graphs for this region.
""",
)

FULLGRAPH_BUDGET = Rule(
    code="CC108",
    name="fullgraph-with-break-budget",
    severity="error",
    doc="""\
## What it does
Reports `fullgraph = true` together with `graph_break_budget > 0`.

## Why it matters
`fullgraph` makes any graph break a compile error, so a budget of allowed breaks can never be used: one of the
two settings does not say what the author meant.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
fullgraph = true
graph_break_budget = 2   # CC108
```

## Fix
Set `graph_break_budget = 0` (or remove it), or set `fullgraph = false` to tolerate that many breaks.
""",
)

TORCH_VERSION = Rule(
    code="CC109",
    name="torch-version-mismatch",
    severity="error",
    doc="""\
## What it does
Checks the installed torch version (without its local tag such as `+cu126`) against `[contract] torch`.

## Why it matters
Compile behaviour, options and limits change between torch releases; a contract validated on one version can
recompile or break on another.

## Example
```toml
[contract]
name = "example"
torch = ">=9.0"   # CC109
```

## Fix
Install a torch that satisfies the requirement, or update the requirement after re-validating the contract.
""",
)

NEEDS_NEWER_TORCH = Rule(
    code="CC110",
    name="needs-newer-torch",
    severity="error",
    doc="""\
## What it does
Reports settings that the installed torch does not support yet, naming the version that adds them
(e.g. per-region `recompile_limit`, a `torch.compile` argument since torch 2.12).

## Why it matters
Without this check the engine fails at `torch.compile()` with `TypeError: unexpected keyword argument`.

## Example
A region with `recompile_limit = 4` on torch 2.11 (see `tests/checks/settings/test_settings.py`, which runs it).

```toml
[[region]]
name = "layers"
module = "layers.*"
recompile_limit = 4   # CC110 on torch < 2.12
```

## Fix
Upgrade torch to the named version, or remove the setting (torch's global `torch._dynamo.config.recompile_limit`
applies instead).
""",
)

EAGER_WITHOUT_REASON = Rule(
    code="CC111",
    name="eager-without-reason",
    severity="error",
    doc="""\
## What it does
Reports a region kept eager (`enabled = false`, directly or through `[defaults]`) that has no `reason`.

## Why it matters
An eager region gives up the compile speed-up; without a written reason nobody knows whether it may be turned
back on, and the switch-off outlives the bug it worked around.

## Example
```toml
[[region]]
name = "router"
module = "layers.*.mlp"
enabled = false   # CC111
```

## Fix
Add `reason = "..."` (e.g. an issue link), or remove `enabled = false`.
""",
)

UNTESTED_TORCH = Rule(
    code="CC112",
    name="untested-torch",
    severity="warning",
    doc=f"""\
## What it does
Warns when the installed torch (read from its package metadata, without importing it) is outside the range this
release of torch-compile-contract is tested on: torch {torch_range_text()}. The minor version decides: local builds
(`{_LAST}.0+cu132`), release candidates and nightlies of a tested minor are inside; a nightly of the next minor
(`{_NEXT}.0.dev20260301`) is outside. `doctor` reports it too.

## Why it matters
The checks and the runtime monitor read torch's private compiler internals (Dynamo's callbacks, counters and
compilation records, Inductor's cache lookups), which torch renames between minors without notice. On an untested
torch a check can miss what it looks for and a monitor reading can come up empty: the monitor reports each reading it
lost (`monitor_degraded`), this warning says so before the job starts.

## Example
Installed torch {_NEXT}.0 (see `tests/checks/settings/test_tested_torch.py`, which runs it):

```toml
[contract]
name = "example"   # CC112: torch {_NEXT}.0 is outside the tested range {torch_range_text()}
```

## Fix
Install a tested torch (`pip install "torch{torch_range_specifier()}"`), or a release of torch-compile-contract
tested on yours. To run on an untested torch you validated yourself, allow that version (the finding's location is
`torch==VERSION`), so the next untested one warns again:

```toml
[[allow]]
code = "CC112"
where = "torch=={_NEXT}.*"
reason = "validated on {_NEXT}.0 in staging, see issue #123"
```
""",
)

RULES = (
    UNKNOWN_BACKEND,
    UNKNOWN_MODE,
    UNKNOWN_OPTION,
    OPTION_TYPE,
    MODE_AND_OPTIONS,
    IGNORED_BY_BACKEND,
    CUDAGRAPHS_DYNAMIC,
    FULLGRAPH_BUDGET,
    TORCH_VERSION,
    NEEDS_NEWER_TORCH,
    EAGER_WITHOUT_REASON,
    UNTESTED_TORCH,
)
