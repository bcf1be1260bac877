"""CC4xx rules: the dynamic probe's evidence against each region's budgets (judged in `check`, gathered in `run`)."""

from __future__ import annotations

from contract.findings import Rule

RECOMPILES = Rule(
    code="CC401",
    name="recompiles-over-budget",
    severity="error",
    doc="""\
## What it does
Runs `[probe] steps` iterations (default 8) of the contract's `step(model, i)` with the regions compiled by a cheap
backend (`[probe] backend`, default `eager`), attributes every Dynamo compile to its region instance, and reports
a region whose instances recompiled more than `recompile_budget` times after `warmup_compiles`, with Dynamo's own
guard-failure reason and the source line it names. Recompiles that are Dynamo generalizing a changed size or float
and after which the frame stayed stable are CC406 (a warning) instead.

## Why it matters
Recompiles at steady state mean something on the hot path changes between steps (a Python counter, a flag, a shape
the contract declared static). Each one costs a full compile, and after `recompile_limit` the region silently runs
eager for good.

## Example
```toml
[contract]
model = "contract.demo:build_hazard_model"
step = "contract.demo:step"   # CC401 on region layers: batches == 0 ... # contract/demo.py:64
```

## Fix
Remove the changing state named by the guard (see CC301..CC309 for the usual causes), declare the dimension
dynamic (`dynamic_dims`), or raise `recompile_budget` if the recompiles are expected.
""",
)

LIMIT_HIT = Rule(
    code="CC402",
    name="recompile-limit-hit",
    severity="error",
    doc="""\
## What it does
Reports a region whose code hit Dynamo's recompile limit during the probe (Dynamo's "hit config.recompile_limit"
warning, attributed to the region instance that was compiling).

## Why it matters
From that point the function runs eager for every new input, for the life of the process, with no error: the job
is silently slow (and, with per-rank differences, ranks drift apart).

## Example
```python
def forward(self, x):
    self.steps += 1   # CC402 after 8 probe steps (and CC301 statically)
    return x
```

## Fix
Remove the state that changes every call; `recompile_limit` is a safety net, not a budget.
""",
)

GRAPH_BREAKS = Rule(
    code="CC403",
    name="graph-breaks-over-budget",
    severity="error",
    doc="""\
## What it does
Collects every graph break Dynamo logs while compiling a region during the probe (including a tensor in a Python
`if`, and frames Dynamo gives up on and runs eager) and reports a region with an instance that has more distinct
graph-break sites (the break's reason and its `file:line`) than `graph_break_budget`, with the reasons and lines.
A break Dynamo hits again in a resumed or nested frame at the same line counts once.

## Why it matters
Each break splits the region into graphs with a Python round-trip between them on every call: less fusion, more
launches, and with CUDA graphs whole segments run uncaptured.

## Example
```python
def forward(self, x):
    print(x.shape)   # CC403 (and CC304 statically)
    return self.proj(x)
```

## Fix
Remove the construct Dynamo names in the reason at the line given, or raise `graph_break_budget` (distinct break
sites allowed per region instance) for that region.
""",
)

LATE_HOOK = Rule(
    code="CC404",
    name="hook-added-after-compile",
    severity="warning",
    doc="""\
## What it does
Reports forward or backward hooks and pre-hooks that appeared on a region's modules while the probe's steps ran,
after that region instance first compiled (a hook the step registers before its first compiled call is part of the
graph).

## Why it matters
A hook registered after compile is not part of the compiled graph, and Dynamo does not guard the hook tables of
the modules it inlines: the graph silently skips the hook, with no recompile to notice. A forward hook's logging,
quantization or capture does not happen; a full backward (pre-)hook that scales or clips gradients does not run,
so the gradients differ from eager.

## Example
```python
def step(model, i):
    if i == 2:
        model.layers[0].register_forward_hook(capture)   # CC404
    return model(batch(i))
```

## Fix
Register hooks before the contract is applied (before `enforce()`), or keep the hooked module out of the region.
""",
)

PROBE_FAILED = Rule(
    code="CC405",
    name="probe-step-failed",
    severity="warning",
    doc="""\
## What it does
Reports a probe whose `step(model, i)` raised in the user's own code: the same step also fails with every region
eager (the probe runs it once more under `torch.compiler.set_stance("force_eager")` to tell). A step that fails only
when compiled is CC407, an error.

## Why it matters
The probe's evidence covers only the steps that ran. The failure is the step's or the model's own, not the
compiler's, so it does not say the engine cannot start; it says the startup evidence is incomplete.

## Example
```toml
[contract]
step = "mypkg.serve:step"   # CC405: step 0 raised RuntimeError: ...
```

## Fix
Make the step runnable on the startup model (no external inputs), or set `[probe] enabled = false`.
""",
)

GENERALIZED = Rule(
    code="CC406",
    name="recompiled-then-dynamic",
    severity="warning",
    doc="""\
## What it does
Reports a region whose recompiles exceed `recompile_budget` only because Dynamo generalized something that changed
between steps, and that then stayed stable for the rest of the probe (no further compile of that frame in at least
one later step). Two cases are recognised from Dynamo's guard-failure text: a tensor size changed under
`dynamic = "auto"` ("size mismatch at index N": automatic dynamic recompiles once with that dim symbolic), and a
Python `float` changed (a value guard `... == 1.0`: with `specialize_float=False`, torch's default, the float becomes
a graph input after one recompile). A region that recompiles on every step stays CC401.

## Why it matters
The recompile happens once per frame, not per step, so the engine does not storm. But it is a full compile at
steady state, and the runtime monitor counts it against `recompile_budget` after warm-up, so the region breaches
its budget (and alerts, falls back to eager or fails, per `on_breach`) on the first call that changes the value.

## Example
```python
def step(model, i):
    return model(torch.randn(2 + i, 8))   # CC406: batch size grows, dynamic = "auto": one recompile, then dynamic
```

## Fix
Declare the dimension dynamic up front (`dynamic_dims = { x = [0] }` or `dynamic = true`) so the first compile is
already dynamic; pass a changing float as a tensor (a buffer updated in place); or set `warmup_compiles = 2` when
one generalizing recompile is expected.
""",
)

COMPILE_FAILED = Rule(
    code="CC407",
    name="compile-failed-in-probe",
    severity="error",
    doc="""\
## What it does
Reports a probe step that raised while torch.compile traced or compiled a region (an exception of Dynamo's own:
`InternalTorchDynamoError`, `TorchRuntimeError` from fake-tensor propagation, `BackendCompilerFailed`,
`Unsupported` under `fullgraph`, a recompile-limit failure) and that runs when every region is kept eager (the probe
runs the step once more under `torch.compiler.set_stance("force_eager")`). Typical causes: a custom operator without
a fake implementation (CC601 says where, the probe confirms the crash), a library object updated in `forward` that
Dynamo cannot trace (a torchmetrics metric), a data-dependent op under `fullgraph = true`.

## Why it matters
The engine's first compiled step fails the same way: the start is certain to crash, so it is refused before
traffic arrives, not by the first request.

## Example
```toml
[contract]
model = "mypkg.serve:build"
step = "mypkg.serve:step"   # CC407: compiling a region failed: TorchRuntimeError: ... no fake impl registered ...
```

## Fix
Fix what the error names: register a fake for the custom op (`@op.register_fake`), move the library object's update
out of the compiled method, or keep that region eager (`enabled = false` with a `reason`).
""",
)

PER_INSTANCE = Rule(
    code="CC408",
    name="compiled-once-per-instance",
    severity="warning",
    doc="""\
## What it does
Reports a region whose instances (the layers a glob like `model.layers.*` matched) each compiled the code they
share: one graph per instance instead of one for all. The monitor counts a recompile per instance, so these compiles
are no recompile to it; Dynamo keeps one cache per code object, so it sees one recompile per instance. The guard
Dynamo gives for compiling the frame again decides: it names the instance (`self.idx == 1`, an id or type match on
`self`, a parameter's shape), or every further instance compiles too (three or more). Identical layers that compile
twice on a guard about an input (the first layer's input alone does not require grad) share their two graphs: no
finding. The usual causes are Python state that differs per instance (`self.layer_idx` read in forward, a per-layer flag), parameters
or buffers of different shapes under one glob, or hooks that differ per layer.

## Why it matters
Regional compilation is chosen to compile a block once and reuse it for every layer; here the compile time grows
with the layer count, and past the recompile limit (8 by default) Dynamo stops compiling and the remaining layers
run eager, silently (CC402 when the probe sees it).

## Example
```toml
[contract]
model = "mypkg.models:build"
step = "mypkg.models:step"   # CC408: region 'layers': 4 instances each compiled ...; guard failed: self.layer_idx == 1

[[region]]
name = "layers"
module = "model.layers.*"
```

## Fix
Make the per-instance value a tensor (a buffer) or read it outside the compiled method (CC309 names it when the scan
can see it); put instances of different shapes in regions of their own; or compile the parent module whole.
""",
)

NEVER_COMPILED = Rule(
    code="CC409",
    name="region-never-compiled",
    severity="error",
    doc="""\
## What it does
Reports a region the step calls that Dynamo never compiled in any probe step, with no graph break on record either:
its code ran eager every time. After the probe's steps, the last step runs once more with every region forced eager
while the probe counts the quiet regions' calls; a region called there is reported, with the cause the call site
shows (a TorchDispatchMode such as `FlopCounterMode` active around the call; a method that is a generator).
Regions inside another compiled region, or sharing their method with a region that compiled, are not judged: their
code may have run compiled without a compile of its own.

## Why it matters
The region was declared compiled and is slow as eager, and nothing says so: no compile, no recompile, no graph
break for the monitor to count or alert on.

## Example
```python
class Vocoder(nn.Module):
    def forward(self, x):          # CC409: its method is a generator (it yields): Dynamo skips frames that yield
        for chunk in x.split(2, dim=-1):
            yield self.decode(chunk)
```

## Fix
Make the compiled method return tensors (compile the per-chunk method a generator calls, not the generator); run a
dispatch mode (a FLOP counter, a debug mode) outside the compiled steps, or only on steps that are not timed; or
keep the region eager (`enabled = false` with a `reason`).
""",
)

TWIN_MISSES_REGION = Rule(
    code="CC410",
    name="region-missing-in-twin",
    severity="warning",
    doc="""\
## What it does
With `[probe] model` (a small twin the probe runs the step on, for a model too big to run where `check` runs), binds
the regions to the twin as well as to the model, and reports an enabled region whose glob matches modules of the
model and nothing in the twin.

## Why it matters
The probe compiles and runs only what the twin has: a region the twin lacks gets no probe evidence at all (no
recompile, graph-break or compile-failure finding can come from it), while the report reads as if it had been probed.
A twin built with other attribute names, or a glob naming a layer index the twin does not have, does this.

## Example
```toml
[probe]
model = "contracts.llama_twin:twin"   # 2 layers: model.layers.0 and model.layers.1

[[region]]
name = "last_layer"
module = "model.layers.79"            # CC410: matches model.layers.79 in the model and nothing in the twin
```

## Fix
Give the twin the modules the glob names (the same classes and attribute names; enough layers), or write the glob
so that it matches every instance (`model.layers.*`). `compile-contract init` writes a twin that keeps the model's
module names for Hugging Face models.
""",
)

TWIN_LACKS_KIND = Rule(
    code="CC411",
    name="twin-lacks-layer-kind",
    severity="warning",
    doc="""\
## What it does
With `[probe] model`, compares the modules each enabled region holds in the model with those it holds in the twin,
by class and by the flags each module was built with (its `bool`, `str` and `None` attributes, such as `is_sliding`
or `attention_type`; numbers are widths and layer indices, which a twin changes by design), and reports a kind of
module the model has and the twin does not, with the first module path holding one.

## Why it matters
A twin of two dense layers of an MoE model never runs the router or the experts; a twin of two sliding-window layers
never runs full attention: the probe's verdict says nothing about that code, and the model's recompiles or graph
breaks there are found only in production.

## Example
```toml
[probe]
model = "contracts.deepseek_twin:twin"   # num_hidden_layers = 2, first_k_dense_replace = 3: two dense layers

[[region]]
name = "layers"
module = "model.layers.*"   # CC411: DeepseekV2MoE(...) at model.layers.3.mlp: the probe never ran its code
```

## Fix
Give the twin one layer of each kind the model has (its per-layer config: `layer_types`, `first_k_dense_replace`,
`mlp_only_layers`, ...). `compile-contract init` picks the twin's layers this way for Hugging Face models.
""",
)

RULES: tuple[Rule, ...] = (
    RECOMPILES,
    LIMIT_HIT,
    GRAPH_BREAKS,
    LATE_HOOK,
    PROBE_FAILED,
    GENERALIZED,
    COMPILE_FAILED,
    PER_INSTANCE,
    NEVER_COMPILED,
    TWIN_MISSES_REGION,
    TWIN_LACKS_KIND,
)
