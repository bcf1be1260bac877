"""CC3xx: mutable Python state on a compiled region's hot path, found by reading the source (no inputs needed).

The scan (`contract.checks.hotpath.scan`) resolves every name against the real objects; `check` turns what it saw
into findings of these rules, located at `file:line` (a module path for CC308). Only CC301 and CC310 are errors, and
only when the value was resolved and certainly changes on every call (CC301: the hot path rewrites it; CC310: the
step does, more often than the region's budget allows): everything heuristic (and anything behind Python state that
only the step turns on) is a warning, because an error stops the engine. CC310 and CC311 need the contract's `step`.
"""

from __future__ import annotations

from contract.findings import Rule

COUNTER = Rule(
    code="CC301",
    name="python-counter-on-hot-path",
    severity="error",
    doc="""\
## What it does
Finds Python `int`, `bool`, `str` (or enum) state that a compiled method reads and then changes on every call:
`self.n += 1`, `self.n = self.n + 1`, `setattr(self, "n", self.n + 1)`, `self.flag = not self.flag`,
`self.flag ^= True`, `global n; n += 1`, `type(self).n += 1`, `self.stats["k"] += 1`, `self.hits[e] += 1` on a list or
dict of ints, `nonlocal` counters and mutable default arguments, anywhere on the region's hot path (the method, the
methods and submodules it calls, `super().forward()`, functions defined inside it, properties, hooks, callable
objects). The value is resolved on the real module instance, so a tensor buffer updated the same way is never
reported. Code that never runs compiled is skipped: under `if not torch.compiler.is_compiling():` (any alias,
`torch._dynamo.is_compiling`, in an `and`, through a local `eager = not is_compiling()`) and after
`if torch.compiler.is_compiling(): return`. A counter behind Python state that is false now (`if self.training:`
on a model in eval mode, `if self.log_stats:` with the flag off) is reported as a warning: it is not traced today,
but recompiles every call once that flag is on. Rewrites that may settle (`max(self.n, seq)`, `self.x or default`)
are CC302. Where torch minors were measured to treat a form differently (a `global`/`nonlocal` counter that nothing
but its own update reads: torch 2.14 and 2.15 leave it unguarded and count right), the installed torch decides: on a
torch measured not to recompile it is a warning that names the versions that do (topics/hot-path.md, "Per torch
version"); given the step, the probe's run on the installed torch decides.

## Why it matters
Dynamo bakes Python scalars into the graph and guards on their value. A counter changes every call, so every step
recompiles until `recompile_limit` (8), after which the function silently runs eager for good. This is the MoE
router incident: `self._overflow_total += int(overflow)` recompiled every step, stalled a multi-rank job for
minutes and ended in NaNs. The `+=` reads the value, so even a counter never used in the math does this.

## Example
```python
class Router(nn.Module):
    def forward(self, x):
        self.batches += 1   # CC301: Router.batches (int) updated on the hot path
        return self.gate(x).argmax(-1)
```

## Fix
Keep counters in a registered buffer and update it in place without autograd:
`self.register_buffer("batches", torch.zeros((), dtype=torch.long), persistent=False)` in `__init__`, then
`with torch.no_grad(): self.batches.add_(1)` in forward. Or move the bookkeeping out of the compiled method (the
engine loop), or under `if not torch.compiler.is_compiling():`.
""",
)

ASSIGNED = Rule(
    code="CC302",
    name="python-state-set-on-hot-path",
    severity="warning",
    doc="""\
## What it does
Warns when a compiled method assigns a Python scalar or `None` attribute (or a global) that the hot path also
reads, e.g. `self.seq_len = x.shape[1]` read later, `self.first = False`, lazy attributes created on first call
(`if not hasattr(self, "cache"): self.cache = ...`), `None`-vs-tensor caches; rewrites from the value's own value
that may settle (`self.max_len = max(self.max_len, seq)`, `self.act = self.act or "relu"`,
`self.mode = Mode(self.mode)`); and Python lists or dicts on the hot path whose length or keys change
(`self.history.append(...)`, `.pop()`, `.update()`, `+=`, `self.seen[len(self.seen)] = v` or a dict stored under a
key that changes every call).

## Why it matters
Each distinct value read by compiled code is a new guard and a new compile; they share the recompile limit (8).
Dynamo also guards on a list's length and a dict's keys, so a list appended every call recompiles every call unless
something outside the region clears it. Whether it storms depends on how often the value changes, which the scan
cannot know, hence a warning.

## Example
```python
def forward(self, x):
    if self.first:
        x = x * 2
    self.first = False   # CC302: one recompile when the value flips
    return x
```

## Fix
Compute the value from inputs inside forward (a local), set it once in `__init__`, keep it in a buffer, or move the
assignment (or the list bookkeeping) out of the compiled method.
""",
)

FLOAT_STATE = Rule(
    code="CC303",
    name="python-float-on-hot-path",
    severity="warning",
    doc="""\
## What it does
Warns when a compiled method updates a Python `float` attribute it reads (a running average, a temperature
schedule), or changes `nn.Dropout.p` on the hot path.

## Why it matters
With today's default `specialize_float=False`, a float recompiles once and then becomes a graph input; under other
configs (or as `Dropout.p`) it specializes and recompiles on every new value: a latent storm.

## Example
```python
def forward(self, x):
    self.ema = 0.9 * self.ema + 0.1 * 1.0   # CC303
    return x * self.ema
```

## Fix
Keep the value in a 0-d tensor buffer updated in place under `torch.no_grad()`, or pass it as an argument.
""",
)

GRAPH_BREAK_CALL = Rule(
    code="CC304",
    name="graph-break-call-on-hot-path",
    severity="warning",
    doc="""\
## What it does
Warns about calls on the hot path that Dynamo cannot trace: `time.time()` / `perf_counter()`, `random.*`,
`print`, `input`, `breakpoint`, `next()` on an iterator kept on an object, methods of a `logging.Logger`
(`logger.info(...)`, unless listed in Dynamo's `ignore_logging_functions`) and `warnings.warn` (these two only where
they run on every call, not under a test the scan cannot decide), `loss.backward()` and `requires_grad_()` on a
tensor or a module (a training step or gradient penalty compiled whole), helpers decorated with
`@torch.compiler.disable` (resolved by identity, whatever name they were imported under, through properties that
only return an attribute: `self.trainer.results.log(...)`), methods of an I/O object (`io.StringIO`, a file,
`sys.stdout`), and torch functions Dynamo puts in the graph that return a Python number
(`torch.cuda.device_count()`, `torch.cuda.memory_allocated()`: "torch.* op returned non-Tensor"; read from
Dynamo's own lists, so `torch.cuda.is_available()`, which it constant-folds, is not reported). A region whose
`graph_break_budget` accepts as many sites as the scan finds (CC304 and CC305 together) has made the call: they are
not reported; past the budget, all are.

## Why it matters
Each is a graph break: the region is split in two graphs with a Python round-trip between them, every step. With
`fullgraph = true` the compile fails; otherwise the region silently loses fusion and exceeds `graph_break_budget`.
Inside a Python loop (`for layer in self.layers:`, callers included) it is worse, and the finding says so: Dynamo
does not resume after a break in a loop, it skips the whole frame, and the region runs eager (CC305, CC312 alike).

Where torch minors were measured to differ, the installed torch decides: `random.random()` used as a number in
arithmetic (`x * random.random()`) no longer breaks on torch 2.14 and 2.15, so there the finding says which versions
it breaks on (topics/hot-path.md, "Per torch version"); in a condition it breaks on every torch measured.

## Example
```python
def forward(self, x):
    t0 = time.time()   # CC304
    return self.proj(x)
```

## Fix
Move timing, logging and sampling out of the compiled method, use `torch.rand` instead of `random`, or put the
call under `if not torch.compiler.is_compiling():`.
""",
)

ITEM_BRANCH = Rule(
    code="CC305",
    name="tensor-value-branch",
    severity="warning",
    doc="""\
## What it does
Warns when the hot path reads a tensor's value into Python: `.item()` or `.tolist()` of a computed value or a tensor,
and `int()`/`float()`/`bool()` of a certain tensor, anywhere (`counts = one_hot(idx, n).sum(0).tolist()`,
`capacity = int(counts.max())`, unless Dynamo's `capture_scalar_outputs` is on), and a condition
(`if`, `while`, conditional expression, `range()` bound) that reads one: a tensor used as the truth value or
compared with `<`, `==`... (`if y.sum() > 0:`, `if mask.any():`, `if self.scale_buffer > 0.5:`), and a slice bound
read from a tensor (`x[i, : lengths[i]]`, which Python turns into an int). A value counts
as a tensor when it is a reduction (`.sum()`, `.any()`, `.max()`, ...) or a tensor on a real object; shapes and
`is None` tests are not reported.

## Why it matters
Dynamo cannot know a tensor's value while tracing: the graph breaks at the read (data-dependent control flow),
every call.

## Example
```python
def forward(self, x):
    if x.sum().item() > 0:   # CC305
        return x
    return -x
```

## Fix
Express the choice with tensor ops (`torch.where`, masking), or `torch.cond`.
""",
)

ENV_READ = Rule(
    code="CC306",
    name="environment-read-on-hot-path",
    severity="warning",
    doc="""\
## What it does
Warns about `os.environ[...]`, `os.environ.get(...)`, `os.getenv(...)` and `in os.environ` on the hot path.

## Why it matters
Dynamo guards on the value read: changing the variable (or reading one set per rank) recompiles, and the read
happens every step for nothing.

## Example
```python
def forward(self, x):
    if os.environ.get("DEBUG_ROUTER"):   # CC306
        x = x.clone()
    return x
```

## Fix
Read the environment once in `__init__` (or the engine's config) and store the result as a constant.
""",
)

DYNAMIC_GETATTR = Rule(
    code="CC307",
    name="dynamic-attribute-name",
    severity="warning",
    doc="""\
## What it does
Warns about `getattr(obj, name)` on the hot path when the name is not a constant (an f-string, a variable).

## Why it matters
Each distinct name is a distinct guard and a compile (`getattr(self, f"head_{task}")` compiles once per task);
they share the recompile limit.

## Example
```python
def forward(self, x, task: str):
    return getattr(self, f"head_{task}")(x)   # CC307
```

## Fix
Keep the alternatives in an `nn.ModuleDict` and compile one region per alternative, or select with tensor ops.
""",
)

BATCHNORM = Rule(
    code="CC308",
    name="batchnorm-cumulative-average",
    severity="warning",
    doc="""\
## What it does
Warns about `BatchNorm*(momentum=None)` modules in training mode inside a compiled region (location: the module
path).

## Why it matters
With `momentum=None`, torch's BatchNorm computes `1.0 / float(self.num_batches_tracked)` in forward, reading a
tensor as a Python number: a graph break every training step.

## Example
```python
self.norm = nn.BatchNorm1d(64, momentum=None)   # CC308 when the region runs in training mode
```

## Fix
Use a fixed `momentum` (e.g. 0.1), or keep the BatchNorm module out of the compiled region.
""",
)

PER_INSTANCE = Rule(
    code="CC309",
    name="per-instance-specialization",
    severity="warning",
    doc="""\
## What it does
Warns when the instances of one region read a Python `int`/`str` attribute on `self` (e.g. `layer_idx`,
`layer_name`) that differs between instances, on the module or on an object it holds and calls (a LoRA patch in a
layer's list of weight functions, looked up by its weight's name); and when instances of one structure (the same
module classes) hold parameters or buffers of different shapes or dtypes (weights packed per quantization type):
Dynamo keeps parameter shapes static, so each distinct set is a compile of its own. Also when instances of
different classes in one region inherit the compiled method from one base class (augmentation ops sharing their
base's `forward`): Dynamo guards the type of `self`, so each class is a compile of that shared code.

## Why it matters
All instances of a class share one code object and one Dynamo cache; each distinct value is its own
specialization. Regional compilation exists to compile a block once and reuse it for every layer: a per-layer
value makes it compile once per layer instead, and per-layer compile of 32 decoder layers that read
`self.layer_idx` hits the limit (8) during the first step, after which the remaining layers run eager for good.

## Example
```python
class Layer(nn.Module):
    def forward(self, x, cache):
        return cache.update(x, self.layer_idx)   # CC309 with more than 8 layers in the region
```

## Fix
Compile the parent module once (the layer stack), pass the index as an argument, or set the region's
`recompile_limit` above the number of instances (torch >= 2.12).
""",
)

LOOP_MUTATED = Rule(
    code="CC310",
    name="state-changed-between-calls",
    severity="error",
    doc="""\
## What it does
When the contract names a `step`, reads its source (and the eager code it calls: helpers, the model's methods, a
parent module's forward that is not compiled) and finds the Python state it writes between compiled calls that a
compiled region reads: a module attribute (`model.step_count = i`, `setattr(model, "stage", ...)`,
`for layer in model.layers: layer.temperature = t`), `model.train()`/`model.eval()` toggles (a compiled module, or a
Dropout/BatchNorm inside it, reads `training`), the Python scalars torch's own modules read (`drop.p = rate`), module
globals, class attributes, closure cells and container items; a closure or `functools.partial` the step rebuilds from a
changing value (`model.act = make_act(slope * 0.9 ** i)`); and Python numbers the step passes to a compiled call that change
between calls (`model(x, 0.1 * i)`, a flag `training_pass=i % 2 == 0`), a warning (Dynamo turns a number dynamic
after one recompile, unless dynamic shapes are off; a flag is one graph per value). Attributes set on every
submodule through `model.apply(...)` (a function, a `partial`, a def or lambda of the step) count as written by the
step. A region the step calls under two grad modes or autocast settings (training with grad, an evaluation every N
steps under `torch.no_grad()`) is a warning too: Dynamo guards on both, one graph per mode. So is a tensor whose
size the step changes between calls (`tokens[:, : 4 + i]`, `torch.randint(0, V, (2, 8 + i))`): a recompile for the
first new size, then a dynamic graph; not reported where the region sets `dynamic = true` or `dynamic_dims`, nor
when the probe runs (it measures the size change: CC406 or CC401); a collator that pads each batch to its longest
example is followed into. So is a list whose length the step changes (`[e for _ in range(n_regions)]`), a value
None at the first of a loop's calls only (`residual = None` before `for layer in layers`), and a record the engine
installs in a forward context around each call whose changing Python fields the compiled code reads
(`attn_metadata.max_decode_seq_len`). Calls made through wrappers count: an engine module whose forward calls the
compiled one, an object built on the fly (`Sampler(model).generate(t, p)`), a dict spread (`model(**inputs)`). A
container the step empties every call (`model.acts.clear()`) is the same at every call and is not reported.
Writes through a local alias count as writes of what it names (`kwargs = self.attn.extra_kwargs;
kwargs.pop(key)`, `cache = model_kwargs.get("cache_params")`); `d.update(a=x)` writes the key `a`, as `d["a"] = x`
does, so updating the same named keys every call keeps a dict's key set.
It is an error when the state is a Python `int`/`str`/`bool`/enum and the step certainly changes it on every call
(a counter, a value computed as `i`, `i + k`, `i % 2 == 0`, `not flag`), more often than the region's
`recompile_budget` allows, except an `int` held by a plain object rather than a module (a generation cache's
`seqlen_offset`): Dynamo's automatic dynamic shapes make that one a symbol after one recompile; a warning when it may settle (a schedule such as `i // 100`, a float, a flag set under
`if i == 2:`, two constants written in turn). A constant written every step (`model.eval()`) is not reported.

## Why it matters
Dynamo bakes the Python values a compiled region reads into its graph and guards on them. A value the loop changes
between calls fails the guard at the next call: a recompile per new value, up to `recompile_limit` (8), after which
the region silently runs eager for good. The scan sees it before the first step; the probe (CC401) only when its
steps happen to change the value.

## Example
```python
def step(model, i):
    model.step_count = i          # CC310: the compiled forward reads self.step_count
    return model(batch(i))
```

## Fix
Pass the changing value as a tensor argument (`model(x, step=torch.tensor(i))`), keep it in a buffer updated in
place (`model.step_buf.fill_(i)`), or stop reading it in the compiled code.
""",
)

LATE_HOOK = Rule(
    code="CC311",
    name="hook-registered-by-step",
    severity="warning",
    doc="""\
## What it does
When the contract names a `step`, warns when the step (or code it calls) registers a forward hook or pre-hook
(`register_forward_hook`, `register_forward_pre_hook`) on a module inside a compiled region. The hook's body is then
scanned as hot code, since it runs inside the compiled call from then on. A hook that returns nothing (it only
captures activations, e.g. into a dict of the step) is not reported: measured on torch 2.13 and 2.11, it runs inside the
compiled call without a recompile, and only what its body does to Python state can matter.

## Why it matters
A hook added after the first compile that returns a value is not what the graph was compiled with. Measured on
torch 2.13 and 2.11: on the region's root module Dynamo compiles again; on a submodule the compiled graph silently ignores
what the hook returns (no guard, wrong results). A step that adds one every call keeps doing so. The probe reports
a recompile as CC404 when it runs.

## Example
```python
def step(model, i):
    if i == 2:
        model.register_forward_hook(log_output)   # CC311
    return model(batch(i))
```

## Fix
Register hooks before the contract is applied (before the first compiled call), and keep them registered.
""",
)

DYNAMIC_SHAPE = Rule(
    code="CC312",
    name="data-dependent-output-shape",
    severity="warning",
    doc="""\
## What it does
Warns about ops on the hot path whose output shape depends on tensor values: `nonzero`, `argwhere`,
`masked_select`, `unique`, `unique_consecutive`, `bincount`, one-argument `torch.where(mask)`, and indexing with a
boolean mask that is certainly a tensor (`y[y > 0]`, `x[mask.bool()]`, `x[~torch.isnan(x)]`). Writing through a
mask (`x[mask] = 0`, `masked_fill`) and three-argument `torch.where` keep the shape and are not reported; neither is
an op under a test the scan cannot decide (an auxiliary loss behind `if output_router_logits:` may never run), nor
anything when Dynamo's `capture_dynamic_output_shape_ops` is on.

## Why it matters
Measured on torch 2.13: Dynamo stops at each of them ("Dynamic shape operator") and breaks the graph, every call.
The region runs as several graphs with Python in between; with `fullgraph = true` the compile fails.

## Example
```python
def forward(self, x):
    kept = x[x.abs() > self.threshold]   # CC312 when x.abs() is a tensor the scan can tell
    ids = torch.nonzero(x.sum(-1) > 0)   # CC312
```

## Fix
Keep shapes static: `torch.where(mask, x, 0)`, `masked_fill`, a padded top-k, or `torch.bincount` replaced by
`torch.histc`/one-hot sums; or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True` and budget the
dynamic shape.
""",
)

RULES: tuple[Rule, ...] = (
    COUNTER,
    ASSIGNED,
    FLOAT_STATE,
    GRAPH_BREAK_CALL,
    ITEM_BRANCH,
    ENV_READ,
    DYNAMIC_GETATTR,
    BATCHNORM,
    PER_INSTANCE,
    LOOP_MUTATED,
    LATE_HOOK,
    DYNAMIC_SHAPE,
)
