"""The probe puts the model back: what the step changed on module instances, their classes and their modules'
globals is restored after a real torch.compile run (see contract/probe.py's docstring for what is not)."""

from __future__ import annotations

import random
from pathlib import Path

import torch
from torch import nn

from contract.pipeline import check

CALLS = 0
MODE = "train"


class Stats:
    def __init__(self) -> None:
        self.n = 0


class Base(nn.Module):
    seen: list[int] = []


class Router(Base):
    total = 0
    table = {"n": 0}

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.hist = {"n": 0}
        self.order = [1, 2]
        self.stats = Stats()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global CALLS
        CALLS += 1
        Router.total += 1
        Router.table["n"] += 1
        Base.seen.append(CALLS)
        self.hist["n"] += 1
        self.order.append(3)
        self.stats.n += 1
        if not hasattr(self, "cache"):
            self.cache = torch.ones(8)
        with torch.no_grad():
            self.count.add_(1)
        return self.lin(x) * self.cache


def step(model: nn.Module, i: int) -> torch.Tensor:
    global MODE
    MODE = "eval"
    if i == 0:
        model.register_buffer("late", torch.zeros(2))
        model.extra = nn.Linear(2, 2)
        Router.added = True
        globals()["ADDED_GLOBAL"] = 1
    if i == 1:  # after the first compiled call: a late hook (CC404)
        model.register_forward_hook(lambda mod, args, out: out)
    with torch.no_grad():
        return model(torch.randn(2, 8))


def run_probe(tmp_path: Path, model: nn.Module) -> list:
    path = tmp_path / "c.toml"
    path.write_text(
        '[contract]\nname = "r"\n[[region]]\nname = "r"\nmodule = ""\nbackend = "eager"\n[probe]\nsteps = 4\n'
    )
    _, _, findings = check(path, model, step=step)
    return findings


def test_the_probe_restores_instances_classes_globals_and_rng(tmp_path):
    model = Router()
    keys, state = set(vars(model)), {k: v.clone() for k, v in model.state_dict().items()}
    hooks, seen, table = dict(model._forward_hooks), Base.seen, Router.table
    torch.manual_seed(123)
    random.seed(7)
    rng, py_rng = torch.get_rng_state(), random.getstate()

    findings = run_probe(tmp_path, model)

    assert CALLS == 0 and MODE == "train" and "ADDED_GLOBAL" not in globals()  # module globals
    assert Router.total == 0 and Router.table == {"n": 0} and Router.table is table  # class attributes
    assert Base.seen == [] and Base.seen is seen and "added" not in vars(Router)
    assert set(vars(model)) == keys and not hasattr(model, "cache")  # instance attributes
    assert model.hist == {"n": 0} and model.order == [1, 2] and model._forward_hooks == hooks
    assert set(model.state_dict()) == set(state) and not hasattr(model, "extra")  # buffers and submodules
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in state.items())
    assert torch.equal(torch.get_rng_state(), rng) and random.getstate() == py_rng
    assert model.stats.n > 0  # state inside plain objects is documented as not restored
    assert any(f.code == "CC404" for f in findings)  # the hook was seen before it was removed


def test_after_the_probe_the_model_runs_eager_as_before(tmp_path):
    model = Router()
    x = torch.randn(2, 8)
    with torch.no_grad():
        expected = model.lin(x).clone()
    run_probe(tmp_path, model)
    assert model._compiled_call_impl is None
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected)
    global CALLS
    CALLS = 0
    Router.total, Router.table["n"] = 0, 0
    Base.seen.clear()
