"""CC4xx: the dynamic probe's evidence (recompiles, limit hits, graph breaks, late hooks) against each region's budgets.

Runs only when the contract names a `step` (or `--step` is given) and `[probe] enabled`. Locations are region names
(`[[allow]] where = "layers"`), except CC405 (`contract.step`).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from contract.findings import Finding, Rule

RECOMPILES = Rule(code="CC401", name="recompiles-over-budget", severity="error", doc="""\
## What it does
Runs `[probe] steps` iterations (default 8) of the contract's `step(model, i)` with the regions compiled by a cheap
backend (`[probe] backend`, default `eager`), attributes every Dynamo compile to its region instance, and reports
a region whose instances recompiled more than `recompile_budget` times after `warmup_compiles`, with Dynamo's own
guard-failure reason and the source line it names.

## Why it matters
Recompiles at steady state mean something on the hot path changes between steps (a Python counter, a flag, a shape
the contract declared static). Each one costs a full compile, and after `recompile_limit` the region silently runs
eager for good.

## Example
```toml
[contract]
model = "contract.demo:build_hazard_model"
step = "contract.demo:step"   # CC401 on region layers: batches == 0 ... # contract/demo.py:62
```

## Fix
Remove the changing state named by the guard (see CC301..CC309 for the usual causes), declare the dimension
dynamic (`dynamic_dims`), or raise `recompile_budget` if the recompiles are expected.
""")

LIMIT_HIT = Rule(code="CC402", name="recompile-limit-hit", severity="error", doc="""\
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
""")

GRAPH_BREAKS = Rule(code="CC403", name="graph-breaks-over-budget", severity="error", doc="""\
## What it does
Counts Dynamo's graph breaks during each compile of a region during the probe and reports a region whose compiles
break more often than `graph_break_budget`, with Dynamo's break reasons.

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
Remove the construct Dynamo names in the reason, or raise `graph_break_budget` for that region.
""")

LATE_HOOK = Rule(code="CC404", name="hook-added-after-compile", severity="warning", doc="""\
## What it does
Reports forward hooks or pre-hooks that appeared on a region's modules while the probe's steps ran, that is after
the region was compiled.

## Why it matters
A hook registered after compile is not part of the compiled graph and is silently ignored by it (or triggers
a recompile when Dynamo notices), so the hook's logging, quantization or capture does not happen.

## Example
```python
def step(model, i):
    if i == 2:
        model.layers[0].register_forward_hook(capture)   # CC404
    return model(batch(i))
```

## Fix
Register hooks before the contract is applied (before `enforce()`), or keep the hooked module out of the region.
""")

PROBE_FAILED = Rule(code="CC405", name="probe-step-failed", severity="warning", doc="""\
## What it does
Reports a probe whose `step(model, i)` raised, with the exception.

## Why it matters
The probe's evidence covers only the steps that ran; the same failure is likely in the engine once compiled.

## Example
```toml
[contract]
step = "mypkg.serve:step"   # CC405: step 0 raised RuntimeError: ...
```

## Fix
Make the step runnable on the startup model (no external inputs), or set `[probe] enabled = false`.
""")

RULES: tuple[Rule, ...] = (RECOMPILES, LIMIT_HIT, GRAPH_BREAKS, LATE_HOOK, PROBE_FAILED)
_SOURCE = re.compile(r"#\s*([^#]*?):(\d+) in (\w+)")


def check(ctx: Any) -> list[Finding]:
    """Run the probe when a step is given and `[probe] enabled`, and judge its evidence against the budgets."""
    probe_spec = ctx.contract.probe
    if ctx.step is None or ctx.binding is None or not probe_spec.enabled:
        return []
    from contract.probe import probe

    result = probe(ctx.contract, ctx.binding.model, ctx.step, steps=probe_spec.steps, backend=probe_spec.backend)
    return judge(ctx.contract, result)


def judge(contract: Any, result: Any) -> list[Finding]:
    """Findings from a probe result: recompiles, limit hits and breaks over budget, late hooks, step failure."""
    regions = {r.name: r for r in contract.regions}
    out = [*_recompiles(regions, result), *_limit_hits(result), *_breaks(regions, result)]
    for region in sorted({r for r, _ in result.hooks_added}):
        paths = [p for r, p in result.hooks_added if r == region]
        out.append(LATE_HOOK.finding(region, f"forward hooks were added to {', '.join(paths[:3])} after region "
                                     f"{region!r} was compiled; the compiled graph ignores them",
                                     "register hooks before the contract is applied"))
    if result.error:
        out.append(PROBE_FAILED.finding("contract.step", f"probe {result.error} (evidence covers {result.steps} "
                                        "steps)", "make the step runnable at startup, or set [probe] enabled = false"))
    return out


def _recompiles(regions: dict[str, Any], result: Any) -> list[Finding]:
    """Per instance and frame: compiles beyond `warmup_compiles`; the worst instance is compared with the budget."""
    per: Counter[tuple[str, str, str]] = Counter(
        (c.region, c.path, c.compile_id.split("/")[0]) for c in result.compiles)
    worst: dict[str, int] = defaultdict(int)
    for (region, path, frame), n in per.items():
        extra = n - regions[region].warmup_compiles
        worst[region] = max(worst[region], extra)
    out = []
    for region, extra in worst.items():
        budget = regions[region].recompile_budget
        if extra > budget:
            reason = next((c.reasons[0] for c in result.compiles if c.region == region and c.reasons), "")
            out.append(RECOMPILES.finding(region, f"region {region!r} recompiled {extra} times in {result.steps} probe "
                                          f"steps (budget {budget}); guard failed: {brief(reason)}",
                                          f"remove the changing state{at(reason)} (see CC301-CC309), or raise "
                                          "recompile_budget if expected"))
    return out


def _limit_hits(result: Any) -> list[Finding]:
    out = []
    for region in dict.fromkeys(r for r, _ in result.limit_hits):
        text = next(t for r, t in result.limit_hits if r == region)
        out.append(LIMIT_HIT.finding(region, f"region {region!r} hit the recompile limit and now runs eager: {text}",
                                     f"remove the state that changes every call{at(text)}"))
    return out


def _breaks(regions: dict[str, Any], result: Any) -> list[Finding]:
    out = []
    for region in dict.fromkeys(c.region for c in result.compiles):
        compiles = [c for c in result.compiles if c.region == region]
        worst = max(sum(c.breaks.values()) for c in compiles)
        budget = regions[region].graph_break_budget
        if worst > budget:
            reasons = Counter(k for c in compiles for k in c.breaks)
            out.append(GRAPH_BREAKS.finding(region, f"region {region!r} broke its graph {worst} times in one compile "
                                            f"(budget {budget}): {'; '.join(brief(k, 160) for k in reasons)}",
                                            "remove the construct in the reason, or raise graph_break_budget"))
    return out


def brief(reason: str, limit: int = 240) -> str:
    """A guard or break reason on one short line (Dynamo's hints dropped)."""
    text = " ".join(reason.split("(HINT")[0].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def at(reason: str) -> str:
    """` at file:line` when Dynamo's reason names the source line."""
    m = _SOURCE.search(reason)
    return f" at {m.group(1).strip()}:{m.group(2)}" if m else ""
