"""Graph breaks of every kind, their budget per region instance, and recompile-limit hits with torch's logs off."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn

from tests.monitor.conftest import Events


class TensorBranch(nn.Module):
    """A Python `if` on a tensor: Dynamo breaks the graph ("generic_jump"); its global counter does not count it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        if y.sum() > 0:
            y = y * 2
        return y + 1


BREAK_LINE = TensorBranch.forward.__code__.co_firstlineno + 2
"""The `if y.sum() > 0:` line."""


class TwoBreaks(nn.Module):
    """Two distinct graph-break sites in one forward (each frame compile stops at its first break)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        torch._dynamo.graph_break()
        y = y + 1
        torch._dynamo.graph_break()
        return y * 2


class OneBreak(nn.Module):
    """One graph-break site, recompiled for every new batch size (dynamic = false)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        torch._dynamo.graph_break()
        return y * 2


class Counter(nn.Module):
    """A Python-int counter: every call recompiles until Dynamo's recompile limit."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x + self.calls


def region(budget: int, extra: str = "") -> str:
    return f'[[region]]\nname = "r"\nmodule = ""\ngraph_break_budget = {budget}\nrecompile_budget = 100\n{extra}'


def test_a_tensor_in_a_python_branch_is_a_graph_break_with_its_source_line(started, events: Events):
    model = TensorBranch()
    _, mon = started(region(0), model)
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(2, 8))
    snap = mon.snapshot()["r"]
    assert snap["graph_breaks"] == 1 and snap["budget_graph_breaks"] == 1 and snap["breached"]
    brk = events.named("graph_break")[0]
    assert brk["site"].endswith(f"test_graph_breaks.py:{BREAK_LINE}") and "generic_jump" in brk["reason"]
    assert [b["budget_kind"] for b in events.named("budget_exceeded")] == ["graph_break_budget"]


def test_two_distinct_break_sites_exceed_a_budget_of_one(started, events: Events):
    model = TwoBreaks()
    _, mon = started(region(1), model)
    with torch.no_grad():
        model(torch.ones(2, 8))
    snap = mon.snapshot()["r"]
    assert (snap["graph_breaks"], snap["budget_graph_breaks"], snap["breached"]) == (2, 2, True)
    assert events.named("budget_exceeded")[0]["count"] == 2


def test_one_break_site_recompiled_many_times_stays_within_a_budget_of_one(started, events: Events):
    model = OneBreak()
    _, mon = started(region(1, "dynamic = false\n"), model)
    with torch.no_grad():
        for batch in range(1, 6):
            model(torch.ones(batch, 8))
    snap = mon.snapshot()["r"]
    assert snap["graph_breaks"] == 5 and snap["budget_graph_breaks"] == 1 and not snap["breached"]
    assert events.named("budget_exceeded") == []


@pytest.fixture
def dynamo_warnings_off():
    """What a job does to quiet torch: Dynamo's WARNING lines (the recompile-limit warning among them) are dropped."""
    torch._logging.set_logs(dynamo=logging.ERROR)
    yield
    torch._logging.set_logs()


def test_a_recompile_limit_hit_is_counted_from_dynamos_record_when_its_warning_is_silenced(
    started, events: Events, dynamo_warnings_off
):
    model = Counter()
    _, mon = started(region(0), model)
    with torch.no_grad():
        for _ in range(12):
            model(torch.ones(2))
    snap = mon.snapshot()["r"]
    assert snap["recompile_limit_hits"] == 1 and snap["compiles"] == 8
    hit = events.named("recompile_limit_hit")
    assert [(h["region"], h["source"]) for h in hit] == [("r", "compilation_metrics")]


def test_a_recompile_limit_hit_reported_by_the_warning_is_not_counted_again_from_the_record(started, events: Events):
    model = Counter()
    _, mon = started(region(0), model)
    with torch.no_grad():
        for _ in range(12):
            model(torch.ones(2))
    assert mon.snapshot()["r"]["recompile_limit_hits"] == 1
    assert [h["source"] for h in events.named("recompile_limit_hit")] == ["warning"]
