"""Models for the upgrade tests: the corpus cases whose behaviour differs between torch 2.13 and 2.15, side by side
in one model (one region each), and steps that fail under one torch."""

from __future__ import annotations

import importlib

import torch
from torch import nn

DIFFERING = (
    "h04_module_global",
    "h05_closure_cell",
    "h24_random",
    "h54_hook_closure_counter",
    "h58_helper_module_global",
)
"""Measured (backend eager, 8 steps): each recompiles every step, or breaks the graph (h24), on torch 2.13 and
compiles once on 2.15: a module-global counter, a closure cell counter, `random.random()`, a hook closure counter,
a helper's module global."""


def region(case: str) -> str:
    """`h04_module_global` -> `h04`: the submodule (and region) name of a case."""
    return case.split("_")[0]


def build() -> nn.Module:
    """The five cases' models under one root."""
    torch.manual_seed(0)
    cases = {region(c): importlib.import_module(f"tests.checks.hotpath.corpus.{c}").build() for c in DIFFERING}
    return nn.ModuleDict(cases)


def step(model: nn.Module, i: int) -> dict[str, torch.Tensor]:
    """Each case's inference step (the corpus's: a seeded fixed-shape batch), on the same batch."""
    x = torch.randn(2, 8, generator=torch.Generator().manual_seed(i))
    with torch.no_grad():
        return {name: module(x) for name, module in model.items()}


def step_fails_on_2_15(model: nn.Module, i: int) -> torch.Tensor:
    """Runs on torch 2.13, raises on 2.15 (a step the candidate torch breaks)."""
    if torch.__version__.startswith("2.15"):
        raise RuntimeError("this step does not run on torch 2.15")
    return step(model, i)["h04"]


def step_always_fails(model: nn.Module, i: int) -> None:
    """A step that runs under no torch."""
    raise RuntimeError("broken step")


def contract(*, manifest: bool = False, step_ref: str = "tests.upgrade.models:step") -> str:
    """A contract with one region per case: eager backend, no recompile or graph break allowed."""
    regions = "".join(f'\n[[region]]\nname = "{region(c)}"\nmodule = "{region(c)}"\n' for c in DIFFERING)
    cache = '\n[cache]\nmanifest = "warm-manifest.json"\n' if manifest else ""
    return (
        f'[contract]\nname = "differing"\nmodel = "tests.upgrade.models:build"\nstep = "{step_ref}"\n\n'
        f'[defaults]\nbackend = "eager"\nrecompile_budget = 0\ngraph_break_budget = 0\n{regions}{cache}\n'
        "[probe]\nsteps = 8\n"
    )
