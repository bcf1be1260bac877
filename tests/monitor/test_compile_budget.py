"""`compile_seconds_budget` with real torch.compile and an injected clock; the warm-start series; the lookup listener."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from prometheus_client import CollectorRegistry, generate_latest

import monitor
from tests.monitor.models import Net
from tests.monitor.test_exporter import promtool_check


def clock(times: list[float]) -> Callable[[], float]:
    """A clock reading `times` in order (each compile reads it at its start and at its end), then +1 s per read."""
    it: Iterator[float] = iter(times)
    last = [times[-1] if times else 0.0]

    def now() -> float:
        last[0] = next(it, last[0] + 1.0)
        return last[0]

    return now


def test_a_first_compile_longer_than_the_budget_breaches_it_with_the_regions_on_breach_action(started, events):
    net = Net()
    body = '[[region]]\nname = "blocks"\nmodule = "blocks.*"\ncompile_seconds_budget = 4\non_breach = "eager"\n'
    binding, mon = started(body, net, clock=clock([0.0, 5.0]))
    with torch.no_grad():
        net.blocks[0](torch.ones(4, 8))
    (event,) = events.named("budget_exceeded")
    assert (event["budget_kind"], event["count"], event["budget"], event["action"]) == (
        "compile_seconds_budget",
        5.0,
        4.0,
        "eager",
    )
    assert binding.regions["blocks"].state == "eager"
    snap = mon.snapshot()["blocks"]
    assert (snap["budget_compile_seconds"], snap["compile_seconds_budget"], snap["breaches"]) == (
        5.0,
        4.0,
        ["compile_seconds_budget"],
    )


def test_recompiles_during_warm_up_do_not_count_against_the_budget_and_after_mark_warm_they_do(started, events):
    net = Net()
    body = (
        '[[region]]\nname = "tail"\nmodule = "tail"\ncompile_seconds_budget = 4\nrecompile_budget = 100\n'
        'on_breach = "fail"\n'
    )
    _, mon = started(body, net, manual_warmup=True, clock=clock([0.0, 1.0, 10.0, 15.0, 20.0, 25.0]))
    x = torch.ones(4, 8)
    with torch.no_grad():
        net.tail(x)  # first compile: 1 s, counted, under budget
        net.tail(x)  # recompile during warm-up: 5 s, not counted
        assert events.named("budget_exceeded") == []
        mon.mark_warm()
        net.tail(x)  # recompile after warm-up: 5 s, counted: breach, fail armed for the next call
    (event,) = events.named("budget_exceeded")
    assert (event["budget_kind"], event["count"], event["action"]) == ("compile_seconds_budget", 5.0, "fail")
    try:
        net.tail(x)
    except monitor.RecompileBudgetExceeded as exc:
        assert exc.kind == "compile_seconds_budget" and "compile seconds budget (5.0 > 4.0)" in str(exc)
    else:
        raise AssertionError("the region did not fail at its next call")


def test_cold_compiles_and_compile_seconds_budgets_are_exported_from_start_and_pass_promtool(started):
    net = Net()
    body = (
        '[[region]]\nname = "blocks"\nmodule = "blocks.*"\ncompile_seconds_budget = 30\n'
        '[[region]]\nname = "tail"\nmodule = "tail"\nrecompile_budget = 100\n'
    )
    registry = CollectorRegistry()
    started(body, net, registry=registry)
    text = generate_latest(registry).decode()
    assert 'torch_compile_cold_compiles_total{region="blocks"} 0.0' in text
    assert 'torch_compile_cold_compiles_total{region="tail"} 0.0' in text
    assert 'torch_compile_compile_seconds_budget{region="blocks"} 30.0' in text
    assert 'torch_compile_compile_seconds_budget{region="tail"} +Inf' in text
    assert 'torch_compile_budget_compile_seconds{region="tail"} 0.0' in text
    result = promtool_check(text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_cache_lookup_listener_wraps_torch_only_while_a_recording_monitor_runs(write_contract):
    from torch._functorch._aot_autograd import autograd_cache
    from torch._inductor.codecache import FxGraphCache

    from tests.monitor.conftest import HEADER, bind_applied

    before = (FxGraphCache.__dict__["load_with_key"], autograd_cache.autograd_cache_key)
    binding = bind_applied(write_contract(HEADER + '[[region]]\nname = "tail"\nmodule = "tail"\n'), Net())
    mon = monitor.Monitor(binding, serve=False, registry=CollectorRegistry(), record_keys=True)
    assert mon.cold.active and FxGraphCache.__dict__["load_with_key"] is not before[0]
    assert autograd_cache.autograd_cache_key.__wrapped__ is before[1]
    mon.stop()
    assert (FxGraphCache.__dict__["load_with_key"], autograd_cache.autograd_cache_key) == before
