"""CC9xx: compiles the engine makes itself (torchtitan, Lightning, Hugging Face, accelerate), checked against the
contract: the engine compiled each `compiled_by = "engine"` region with the contract's settings, no region is
compiled twice, and no region is inlined into a compile of one of its ancestors."""

from __future__ import annotations

from contract.findings import Rule

NOT_COMPILED = Rule(
    code="CC901",
    name="engine-region-not-compiled",
    severity="error",
    doc="""\
## What it does
For a region with `compiled_by = "engine"` (and `verify_at = "start"`, the default), finds the engine's compile on
every module method the region binds: an `OptimizedModule` wrapper in its parent (`torch.compile(block)` put back
into `model.layers`), `module.compile()` (torchtitan's in-place `block.compile(...)`), or a compiled method attribute
(Lightning's re-wrapped `training_step`). A compiled ancestor is not enough: see CC903.

## Why it matters
`enforce` compiles nothing for an engine region: the contract promises budgets and settings for a compile that, when
the engine skipped it (a config flag off, `torch_compile=True` never reaching the model), does not exist. The job
runs eager, slower, and every dashboard of the region reads zero.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
compiled_by = "engine"   # CC901 when the engine did not compile layers.3
```

## Fix
Call `enforce` after the engine compiled the model (torchtitan: after `parallelize`; Lightning and the Trainer: use
the callbacks in `contract.integrations`), turn the engine's compile on, or set `compiled_by = "contract"` so
`enforce` compiles the region itself. An engine that compiles lazily (`generate()`) needs `verify_at =
"first_compile"`.
""",
)

SETTINGS_DIFFER = Rule(
    code="CC902",
    name="engine-compiled-differently",
    severity="error",
    doc="""\
## What it does
Compares how the engine compiled each module of a `compiled_by = "engine"` region with the region's `backend`, `mode`,
`options`, `fullgraph` and `dynamic`, read back from torch's own compile objects. A mode is compared by its expansion
(torch keeps `mode="max-autotune-no-cudagraphs"` only as `max_autotune=True, coordinate_descent_tuning=True`).
With `verify_at = "first_compile"` the same comparison runs in the monitor at each instance's first compile (or, when
Dynamo serves the first call a graph compiled for another model of the class and no compile fires, at the next step
boundary or ledger read, from the engine's compile object), and a difference is a breach (`engine_compile_mismatch`)
handled by `on_breach`.

## Why it matters
The contract's budgets were measured under its settings: an engine that compiles with `mode="reduce-overhead"`
(CUDA graphs) or `fullgraph=False` where the contract says `fullgraph = true` runs a different program than the one
the budgets describe, and a graph break the contract forbids goes through.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
compiled_by = "engine"
fullgraph = true          # CC902: layers.0 compiled with fullgraph False (engine)
```

## Fix
Change the engine's compile settings to the contract's, or write the engine's settings into the contract (the
finding names both values; `compile-contract init` on the compiled model writes them).
""",
)

INLINED = Rule(
    code="CC903",
    name="region-inlined-by-outer-compile",
    severity="error",
    doc="""\
## What it does
Finds compiles of modules that contain a region's modules: `torch.compile(model)` passed to `enforce`, a compiled
parent block, `model.compile()`. The outer compile traces the region's modules into its own graph, so the region
never compiles on its own.

## Why it matters
The monitor attributes compiles to the frames Dynamo compiles: a region inside an outer compile reads zero compiles
while the whole model recompiles on every new sequence length, and the region's settings and budgets never apply.

## Example
```python
cm = torch.compile(model)                          # the whole model as one graph
contract.enforce(cm, "contracts/my_model.toml")   # CC903: region 'layers' lies inside the compile of <root>
```

## Fix
Declare the region where the engine compiles (`module = ""` with `compiled_by = "engine"` for a whole-model compile),
or stop the outer compile and let the contract (or the engine, per block) compile the region.
""",
)

COMPILED_TWICE = Rule(
    code="CC904",
    name="contract-region-already-compiled",
    severity="error",
    doc="""\
## What it does
Reports a `compiled_by = "contract"` region whose module the engine has already compiled (`layer.compile(...)`,
`torch.compile(layer)`, a compiled method).

## Why it matters
`enforce` would compile it again with the contract's settings: `module.compile()` is silently replaced, and a wrapper
in the parent calls the contract's compile from inside its own, which inlines it. Which settings run depends on how
the engine compiled, and nobody chose.

## Example
```python
for block in model.layers:
    block.compile(backend="eager")
contract.enforce(model, "contracts/my_model.toml")   # region 'layers', compiled_by = "contract": CC904
```

## Fix
Set `compiled_by = "engine"` on the region (the contract then verifies the engine's settings), or stop the engine's
compile.
""",
)

UNREADABLE = Rule(
    code="CC905",
    name="engine-compile-unreadable",
    severity="warning",
    doc="""\
## What it does
Reports a module method of a `compiled_by = "engine"` region that is compiled through an object torch does not
document (a wrapper around torch's compile wrapper that is not `functools.wraps`-transparent, a custom backend object
that is not a name or a function), so its settings cannot be read back at start.

## Why it matters
The region may be compiled as the contract says, or not: the start cannot tell. The monitor still attributes its
compiles by module instance.

## Example
```python
block.forward = my_engine.wrap(torch.compile(block.forward))   # CC905: a wrapper torch does not document
```

## Fix
Set `verify_at = "first_compile"` on the region: the monitor then reads the settings from the compile itself when it
happens.
""",
)

RULES: tuple[Rule, ...] = (NOT_COMPILED, SETTINGS_DIFFER, INLINED, COMPILED_TWICE, UNREADABLE)
