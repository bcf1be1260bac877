"""CC6xx rules: operators a region's code calls, checked against what tracing needs (checks in `check`)."""

from __future__ import annotations

from contract.findings import Rule

CUSTOM_OP_NO_FAKE = Rule(
    code="CC601",
    name="custom-op-without-fake",
    severity="error",
    doc="""\
## What it does
Finds custom operators called from a compiled region's code (`torch.ops.ns.op(...)`, or a
`torch.library.custom_op` object called directly or through a module attribute) and checks that each has a fake
(meta) implementation registered (`@op.register_fake` / `torch.library.register_fake`).

## Why it matters
`torch.compile` traces with fake tensors and calls an opaque kernel's fake implementation to learn its output
shapes. Without one, the first compiled call of the region fails with "There was no fake impl registered" (a
`TorchRuntimeError` in the serving path), or the kernel is fenced off with `torch.compiler.disable`, which costs a
graph break on every call.

An error where the static scan sees the call made on every compiled call (nothing it cannot decide before it: no
test on an argument, early `return`, loop over something that may be empty, `and`/`or`), with or without a step: the
first request fails for certain. A warning where the call sits under a condition the scan cannot decide (`if mask is
not None:`, a flag that is off now) or is only named in the region's code: that path may never run compiled. Once the
probe runs the step, a compile that fails is CC407 as well.

## Example
```python
@torch.library.custom_op("mylib::fused_gelu", mutates_args=())
def fused_gelu(x: torch.Tensor) -> torch.Tensor: ...

class Block(nn.Module):
    def forward(self, x):
        return torch.ops.mylib.fused_gelu(x)   # CC601 (error): no fake implementation, called on every call

class Masked(nn.Module):
    def forward(self, x, mask=None):
        if mask is not None:                   # decided by the caller, not here
            x = torch.ops.mylib.fused_gelu(x)  # CC601 (warning): may never run compiled
        return x
```

## Fix
Register a fake next to the kernel: `@fused_gelu.register_fake` returning `torch.empty_like(x)` (or the right
output shape); for ops defined with `torch.library.define`, use `torch.library.register_fake("mylib::fused_gelu")`.
""",
)

RULES = (CUSTOM_OP_NO_FAKE,)
