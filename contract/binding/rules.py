"""CC5xx: binding the contract's regions to the model's modules and methods."""

from __future__ import annotations

from contract.findings import Rule

NO_MATCH = Rule(
    code="CC501",
    name="glob-matches-nothing",
    severity="error",
    doc="""\
## What it does
Resolves each region's `module` glob against `model.named_modules()` and reports a glob that matches no module,
listing the closest module names.

## Why it matters
A region that binds to nothing compiles nothing and monitors nothing: the contract would promise a budget that is
never enforced, typically after a model refactor renamed `model.layers` to `model.decoder.layers`.

## Example
```toml
[[region]]
name = "layers"
module = "model.layer.*"   # CC501: candidates model.layers.0, ...
```

## Fix
Use one of the listed module names; `*` matches one dotted segment, `**` several, `""` the root model.
""",
)

OVERLAP = Rule(
    code="CC502",
    name="method-claimed-twice",
    severity="error",
    doc="""\
## What it does
Reports a submodule method claimed by two regions.

## Why it matters
The second region's settings would silently replace the first's, and compile events could only be attributed to
one of them: budgets would be counted against the wrong region.

## Example
```toml
[[region]]
name = "all-layers"
module = "layers.*"

[[region]]
name = "first-layer"
module = "layers.0"   # CC502: layers.0.forward is already claimed by all-layers
```

## Fix
Narrow one glob (e.g. `layers.[1-9]*`) or list other `methods`, so each module method belongs to one region.
""",
)

NO_METHOD = Rule(
    code="CC503",
    name="method-missing",
    severity="error",
    doc="""\
## What it does
Reports a method named in `methods` that a matched module does not have, that is not callable, or whose lookup
raises (a property that raises: the exception is named). Lists the closest public methods, else the module's own
public methods (`forward` and those its class adds to `nn.Module`, first 8).

## Why it matters
Compiling a misspelled method would fail at startup with an AttributeError, or worse compile nothing.

## Example
```toml
[[region]]
name = "decode"
module = ""
methods = ["decode_stepp"]   # CC503: did you mean decode_step?
```

## Fix
Use a method the module defines; make a raising property a plain method, or remove it from `methods`.
""",
)

NESTED = Rule(
    code="CC504",
    name="nested-region",
    severity="warning",
    doc="""\
## What it does
Warns when a compiled region's module lies inside another compiled region's module.

## Why it matters
When the outer region runs compiled, Dynamo inlines the inner module: the inner region's own settings (backend,
mode, dynamic dims) do not apply on that path and its budget sees no events. It only takes effect where the inner
module is called on its own, or when the outer region falls back to eager.

## Example
```toml
[[region]]
name = "model"
module = ""

[[region]]
name = "mlp"
module = "layers.*.mlp"   # CC504: inside region model
```

## Fix
Compile either the outer module or the inner ones, or set `enabled = false` on the outer region.
""",
)

UNKNOWN_ARG = Rule(
    code="CC505",
    name="dynamic-dim-unknown-argument",
    severity="error",
    doc="""\
## What it does
Checks that every argument named in `dynamic_dims` is a parameter of each compiled method.

## Why it matters
A dim marked on an argument that does not exist is silently never marked: the region specializes on every new
size and recompiles, the very storm `dynamic_dims` was written to prevent.

## Example
```toml
[[region]]
name = "layers"
module = "layers.*"
dynamic_dims = { hidden = [1] }   # CC505: forward(x, mask) has no argument hidden
```

## Fix
Use the parameter's name as written in the method's signature.
""",
)

CONTAINER = Rule(
    code="CC506",
    name="glob-matches-container",
    severity="error",
    doc="""\
## What it does
Reports a region whose glob matches an `nn.ModuleList` or `nn.ModuleDict` itself (`module = "layers"`) for its
`forward`. The container is not claimed.

## Why it matters
A module container has no forward of its own: the model calls its children directly (`for layer in self.layers:`),
never the container, so compiling it compiles nothing. The region's layers run eager, its budgets watch nothing,
and the monitor stays silent, the same as a glob that matches nothing (CC501).

## Example
```toml
[[region]]
name = "layers"
module = "layers"   # CC506: layers is a ModuleList; its children are layers.0, layers.1, ...
```

## Fix
Match the children: `module = "layers.*"`.
""",
)

RULES = (NO_MATCH, OVERLAP, NO_METHOD, NESTED, UNKNOWN_ARG, CONTAINER)
