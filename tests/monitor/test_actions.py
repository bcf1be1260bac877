"""Budget actions with real torch.compile: alert, region-scoped eager fallback, fail at the next call; the demo hazard."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import monitor
from contract.demo import step
from tests.monitor.conftest import bind_applied
from tests.monitor.models import Net

TAIL = """
[[region]]
name = "blocks"
module = "blocks.*"
[[region]]
name = "head"
module = "head"
methods = ["forward", "decode"]
graph_break_budget = 1
[[region]]
name = "tail"
module = "tail"
on_breach = "{action}"
"""


def test_eager_action_switches_only_the_breaching_region_and_outputs_stay_equal_to_eager(started, events):
    net, ref = Net(), Net()
    binding, mon = started(TAIL.format(action="eager"), net, manual_warmup=True)
    x = torch.randn(4, 8)
    with torch.no_grad():
        torch.testing.assert_close(net(x), ref(x))
        mon.mark_warm()
        for _ in range(4):
            torch.testing.assert_close(net(x), ref(x))
    states = {name: rb.state for name, rb in binding.regions.items()}
    assert states == {"blocks": "compiled", "head": "compiled", "tail": "eager"}
    tail = mon.snapshot()["tail"]
    assert (tail["compiles"], tail["eager_fallback"], tail["breached"]) == (2, True, True)
    assert [(e["region"], e["action"]) for e in events.named("budget_exceeded")] == [("tail", "eager")]


def test_fail_action_raises_at_the_next_call_with_region_count_budget_and_reasons(started):
    net = Net()
    _, mon = started(TAIL.format(action="fail"), net)
    x = torch.randn(4, 8)
    with torch.no_grad():
        net(x)
        net(x)  # recompiles: the breach is recorded inside Dynamo's callback, nothing raised there
        with pytest.raises(monitor.RecompileBudgetExceeded) as err:
            net(x)
    e = err.value
    assert (e.region, e.count, e.budget) == ("tail", 1, 0)
    assert "calls" in e.reasons[-1] and "tail" in str(e)
    assert mon.snapshot()["tail"]["fail_armed"]


def test_alert_action_logs_one_line_per_breach_and_keeps_the_region_compiled(started, events):
    net = Net()
    binding, mon = started(TAIL.format(action="alert"), net)
    with torch.no_grad():
        for _ in range(5):
            net(torch.ones(4, 8))
    assert len(events.named("budget_exceeded")) == 1
    assert binding.regions["tail"].state == "compiled"
    assert mon.snapshot()["tail"]["recompiles"] == 4


@pytest.mark.parametrize("action", ["alert", "eager"])
def test_the_demo_hazard_model_shows_the_recompile_storm_and_the_breach(tmp_path: Path, events, action):
    from contract.demo import build_hazard_model

    text = Path("contracts/demo-hazard.toml").read_text().replace('backend = "inductor"', 'backend = "eager"')
    path = tmp_path / "hazard.toml"
    path.write_text(text.replace('on_breach = "alert"', f'on_breach = "{action}"'))
    model = build_hazard_model()
    binding = bind_applied(path, model)
    with monitor.start(binding, logger=events, serve=False) as mon:
        step(model, 0)
        mon.mark_warm()
        for i in range(1, 4):
            step(model, i)
        layers = mon.snapshot()["layers"]
    breach = events.named("budget_exceeded")
    assert [(b["region"], b["action"]) for b in breach] == [("layers", action)]
    assert layers["breached"] and layers["recompiles_by_reason"]["value"] >= 1
    if action == "alert":
        assert layers["recompiles"] == 3  # one per step after the first: the router's int counter
    else:
        assert layers["eager_fallback"] and binding.regions["layers"].state == "eager"
