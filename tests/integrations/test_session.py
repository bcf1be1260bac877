"""The engine-agnostic session the adapters share, on a plain model: a `fail` breach waits for the step boundary (the
step in flight finishes on every instance), `arm()` makes the region's next call raise, warm-up follows the steps."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from contract.integrations.session import Session
from monitor.actions import RecompileBudgetExceeded
from tests.monitor.conftest import Events

BLOCKS = """
[contract]
name = "blocks"
[defaults]
backend = "eager"
dynamic = false
[[region]]
name = "blocks"
module = "blocks.*"
recompile_budget = 0
on_breach = "fail"
"""


class Stack(nn.Module):
    """Three instances of one block class: one step calls each of them."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def test_a_fail_breach_lets_the_step_in_flight_finish_and_arm_makes_the_next_call_raise(write_contract) -> None:
    """The first block's recompile breaches; the other two blocks still run in that step (the monitor's own `fail`
    would have made the second block raise); after `arm()` the region's next call raises."""
    model, events = Stack(), Events()
    session = Session(write_contract(BLOCKS), warmup_steps=1, serve=False, logger=events)
    session.start(model)
    assert session.watches_fail and not session.pending
    model(torch.ones(2, 4))
    session.after_step(1)
    assert session.warm and not session.pending
    out = model(torch.ones(3, 4))  # a new shape: the first block recompiles and breaches, the others still run
    assert out.shape == (3, 4) and session.pending
    assert [e["action"] for e in events.named("budget_exceeded")] == ["fail"]
    assert session.arm() == ["blocks"] and not session.pending
    with pytest.raises(RecompileBudgetExceeded):
        model(torch.ones(3, 4))
    session.stop()


def test_warmup_waits_for_the_steps_and_for_what_the_engine_still_waits_on(write_contract) -> None:
    """Warm-up ends at `warmup_steps` steps, not before, and not while `waiting()` says an evaluation is due."""
    session = Session(write_contract(BLOCKS), warmup_steps=2, serve=False, logger=Events())
    session.start(Stack())
    session.after_step(1)
    assert not session.warm
    session.after_step(2, waiting=lambda: True)
    assert not session.warm
    session.after_step(3, waiting=lambda: False)
    assert session.warm
    session.stop()


def test_a_negative_warmup_is_refused_when_the_session_is_built(write_contract) -> None:
    """`warmup_steps` must be a number of steps or None: a negative one is a one-line error naming the value."""
    with pytest.raises(ValueError, match="warmup_steps=-1"):
        Session(write_contract(BLOCKS), warmup_steps=-1)
