"""Frames Dynamo gives up on (they run eager without a word) count as graph breaks of their region."""

from __future__ import annotations

import torch
from torch import nn


class LoopItem(nn.Module):
    """`.item()` inside a Python loop: torch 2.13 reports "graph break in loop" and skips the whole frame."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(self.lin(x))
            if x.sum().item() > 1e6:
                x = x * 0
        return x


class Plain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.loop = LoopItem()
        self.plain = Plain()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.plain(self.loop(x))


REGIONS = """
[[region]]
name = "loop"
module = "loop"
graph_break_budget = 0
on_breach = "{action}"
[[region]]
name = "plain"
module = "plain"
"""


def steps(model: nn.Module, n: int) -> list[torch.Tensor]:
    with torch.no_grad():
        return [model(torch.ones(2, 8)) for _ in range(n)]


def test_a_frame_dynamo_skips_for_a_graph_break_in_a_loop_is_one_graph_break_of_its_region(started, events):
    net = Net()
    _, mon = started(REGIONS.format(action="alert"), net)
    steps(net, 3)
    snap = mon.snapshot()
    assert (snap["loop"]["compiles"], snap["loop"]["graph_breaks"], snap["loop"]["skipped_frames"]) == (1, 1, 1)
    assert (snap["plain"]["compiles"], snap["plain"]["graph_breaks"], snap["plain"]["skipped_frames"]) == (1, 0, 0)
    [brk] = events.named("graph_break")
    assert brk["region"] == "loop" and brk["skipped_frame"] is True and brk["fail_type"] == "Unsupported"
    assert "item()" in brk["reason"] and len(brk["reason"]) <= 200
    mon.snapshot()
    assert mon.snapshot()["loop"]["graph_breaks"] == 1 and len(events.named("graph_break")) == 1


def test_a_zero_graph_break_budget_breaches_on_a_skipped_frame_and_the_eager_action_keeps_outputs(started, events):
    net = Net()
    expected = steps(Net(), 2)
    _, mon = started(REGIONS.format(action="eager"), net)
    outs = steps(net, 2)
    snap = mon.snapshot()["loop"]
    assert snap["breached"] and snap["breaches"] == ["graph_break_budget"] and snap["eager_fallback"]
    [breach] = events.named("budget_exceeded")
    assert (breach["region"], breach["budget_kind"], breach["count"], breach["budget"], breach["action"]) == (
        "loop",
        "graph_break_budget",
        1,
        0,
        "eager",
    )
    assert all(torch.allclose(a, b) for a, b in zip(outs, expected, strict=True))
    assert not mon.snapshot()["plain"]["breached"]


def test_the_skip_is_counted_at_the_next_compile_of_any_region_without_a_snapshot(started, events):
    net = Net()
    _, mon = started(REGIONS.format(action="alert"), net)
    steps(net.loop, 1)
    assert events.named("graph_break") == []  # its metrics record appears only after the end callback
    steps(net.plain, 1)
    assert [e["region"] for e in events.named("budget_exceeded")] == ["loop"]


def test_a_graph_break_that_dynamo_resumes_from_is_not_also_counted_as_a_skipped_frame(started, events):
    from tests.monitor.models import Breaking

    net = nn.Module()
    net.head = Breaking()
    _, mon = started('[[region]]\nname = "head"\nmodule = "head"\ngraph_break_budget = 1\n', net)
    steps(net.head, 2)
    snap = mon.snapshot()["head"]
    assert (snap["compiles"], snap["graph_breaks"], snap["skipped_frames"], snap["breached"]) == (2, 1, 0, False)
    assert [e["skipped_frame"] for e in events.named("graph_break")] == [False]


def test_a_skip_before_a_dynamo_reset_is_still_counted_once_and_stale_records_never_match_new_ids(started, events):
    net = Net()
    _, mon = started(REGIONS.format(action="alert"), net)
    steps(net, 1)
    torch._dynamo.reset()
    steps(net.plain, 2)  # compile id 0/0 again: the old record of 0/0 (a skip) must not be matched to it
    snap = mon.snapshot()
    assert (snap["loop"]["graph_breaks"], snap["plain"]["graph_breaks"], snap["plain"]["compiles"]) == (1, 0, 2)
