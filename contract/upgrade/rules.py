"""The results of `compile-contract upgrade` that are not findings of `check`: rule records for SARIF (ids
`upgrade/...`, outside the checker's CCxxx catalog: `check` never reports them)."""

from __future__ import annotations

from contract.findings import Rule

BREAK_ADDED = Rule(
    code="upgrade/graph-break-added",
    name="graph-break-added",
    severity="warning",
    doc="""\
## What it does
Reports a graph break the step's recorded run has under the candidate torch and not under the installed one.

## Why it matters
A new break splits a region's graph: two compiles where there was one, eager code between them, and a break site
counted against `graph_break_budget`.

## Example
A helper that calls `random.random()` in forward breaks the graph on one torch and is traced on another.

## Fix
Remove what breaks the graph at the reported line, or raise `graph_break_budget` when the break is accepted.
""",
)

RECOMPILE_ADDED = Rule(
    code="upgrade/recompile-added",
    name="recompile-added",
    severity="warning",
    doc="""\
## What it does
Reports a guard that fails, and recompiles a region, under the candidate torch and not under the installed one.

## Why it matters
A guard the new torch installs on Python state (a counter, a closure cell, a module global) recompiles the region
every time that state changes: a recompile storm after the upgrade.

## Example
A module-global counter incremented in forward: one torch does not guard on it, another recompiles every step.

## Fix
Remove the changing state the guard reads (CC301-CC309 explain each kind), or raise `recompile_budget`.
""",
)

BUDGET_BROKEN = Rule(
    code="upgrade/budget-broken",
    name="budget-broken",
    severity="error",
    doc="""\
## What it does
Reports a region whose recorded run under the candidate torch breaks its `recompile_budget` or
`graph_break_budget` (counted as the runtime monitor counts them).

## Why it matters
In production the monitor would breach: alert, fall back to eager or stop, by the region's `on_breach`.

## Example
`recompile_budget = 0` and the candidate recompiles the region in every step.

## Fix
Fix the cause before upgrading, or raise the region's budget in the contract.
""",
)

STEP_FAILS = Rule(
    code="upgrade/step-fails",
    name="step-fails",
    severity="error",
    doc="""\
## What it does
Reports a step that runs under the installed torch and raises under the candidate torch.

## Why it matters
The model does not run on the new torch as it is.

## Example
A compile that the candidate's Dynamo refuses (an unsupported construct under `fullgraph = true`).

## Fix
Make the step run under the candidate torch before upgrading.
""",
)

RULES: tuple[Rule, ...] = (BREAK_ADDED, BUDGET_BROKEN, RECOMPILE_ADDED, STEP_FAILS)
