"""Attribution with real torch.compile (backend eager): exact per-region counts, reasons, resets, threads, limits."""

from __future__ import annotations

import threading

import torch

from monitor._dynamo import compiled_callable
from tests.monitor.models import Net, Scaled

REGIONS = """
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
recompile_budget = 10
"""


def run(model, steps: int, batch: int = 4) -> list[torch.Tensor]:
    with torch.no_grad():
        return [model(torch.ones(batch, 8)) for _ in range(steps)]


def counts(mon, region: str) -> tuple[int, int, int]:
    s = mon.snapshot()[region]
    return s["compiles"], s["recompiles"], s["graph_breaks"]


def test_each_region_gets_exact_compile_recompile_and_graph_break_counts(started, events):
    net = Net()
    _, mon = started(REGIONS, net)
    run(net, 3)
    assert counts(mon, "blocks") == (3, 0, 0)  # one cache entry per instance: Dynamo recompiles, ours are firsts
    assert counts(mon, "head") == (3, 0, 1)  # forward, its resume function after the break, decode
    assert counts(mon, "tail") == (3, 2, 0)  # the Python-int counter: every later call recompiles
    snap = mon.snapshot()
    assert snap["tail"]["recompiles_by_reason"]["value"] == 2
    assert snap["tail"]["budget_recompiles"] == 2 and not snap["tail"]["breached"]
    assert snap["blocks"]["instances"] == 3
    assert [e["module"] for e in events.named("recompile")] == ["tail", "tail"]


def test_snapshot_has_the_stable_keys_for_every_region_before_any_compile(started):
    _, mon = started(REGIONS, Net())
    snap = mon.snapshot()
    assert list(snap) == ["blocks", "head", "tail"]
    for stats in snap.values():
        assert {
            "compiles": 0,
            "recompiles": 0,
            "graph_breaks": 0,
            "breached": False,
            "eager_fallback": False,
            "compile_seconds": 0.0,
        }.items() <= stats.items()


def test_a_shape_recompile_is_attributed_to_the_instance_whose_guard_failed(started, events):
    net = Net()
    _, mon = started(REGIONS, net)
    run(net, 1, batch=4)
    run(net, 1, batch=5)
    reasons = [(e["module"], e["reason"]) for e in events.named("recompile") if e["region"] == "blocks"]
    assert reasons == [("blocks.0", "shape"), ("blocks.1", "shape"), ("blocks.2", "shape")]
    assert mon.snapshot()["blocks"]["recompiles_by_reason"]["shape"] == 3


def test_graph_breaks_over_budget_are_one_breach_line_with_the_reason(started, events):
    net = Net()
    _, mon = started(REGIONS.replace("graph_break_budget = 1", "graph_break_budget = 0"), net)
    run(net, 3)
    breaches = events.named("budget_exceeded")
    assert [(b["region"], b["budget_kind"], b["action"]) for b in breaches] == [("head", "graph_break_budget", "alert")]
    assert "graph_break" in events.named("graph_break")[0]["reason"]
    assert mon.snapshot()["head"]["breached"]


def test_recompiles_during_warm_up_do_not_count_until_mark_warm(started):
    net = Net()
    _, mon = started(REGIONS.replace("recompile_budget = 10", "recompile_budget = 1"), net, manual_warmup=True)
    run(net, 4)
    assert mon.snapshot()["tail"]["budget_recompiles"] == 0
    mon.mark_warm()
    run(net, 2)
    tail = mon.snapshot()["tail"]
    assert (tail["recompiles"], tail["budget_recompiles"], tail["breached"]) == (5, 2, True)


def test_monitor_survives_dynamo_reset_and_counts_compiles_after_it(started, events):
    net = Net()
    _, mon = started(REGIONS, net)
    run(net, 1)
    torch._dynamo.reset()
    run(net, 1)
    assert counts(mon, "blocks") == (6, 0, 0)
    assert counts(mon, "tail") == (2, 0, 0)  # after a reset Dynamo forgot: a first compile again, not a recompile
    assert mon.ledger.totals()["resets"] == 1 and events.named("dynamo_reset_seen")


def test_callbacks_removed_behind_the_monitors_back_are_re_registered_at_snapshot(started, events):
    from torch._dynamo.callback import callback_handler

    net = Net()
    _, mon = started(REGIONS, net)
    run(net, 1)
    callback_handler.start_callbacks.clear()
    callback_handler.end_callbacks.clear()
    mon.snapshot()
    run(net, 1)
    assert events.named("monitor_hooks_reregistered")
    assert counts(mon, "tail")[0] == 2


def test_threads_compiling_different_regions_at_once_are_counted_exactly(started):
    model = torch.nn.ModuleDict({"a": Scaled(2), "b": Scaled(3)})
    body = (
        '[[region]]\nname = "a"\nmodule = "a"\ndynamic = false\n[[region]]\nname = "b"\nmodule = "b"\ndynamic = false\n'
    )
    _, mon = started(body, model)
    barrier = threading.Barrier(2)

    def work(name: str) -> None:
        barrier.wait()
        with torch.no_grad():
            for batch in (1, 2, 3):
                model[name](torch.ones(batch, 8))

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert counts(mon, "a") == (3, 2, 0) and counts(mon, "b") == (3, 2, 0)
    assert mon.ledger.totals()["unclaimed"]["compiles"] == 0


def test_dynamo_recompile_limit_hit_is_detected_and_attributed(started, events):
    net = Net()
    _, mon = started(REGIONS, net)
    with torch._dynamo.config.patch(recompile_limit=3):
        run(net, 6)
    tail = mon.snapshot()["tail"]
    assert tail["recompile_limit_hits"] == 1
    hit = events.named("recompile_limit_hit")
    assert [e["region"] for e in hit] == ["tail"] and "calls" in hit[0]["last_reason"]


def test_a_compile_outside_every_region_is_counted_as_unclaimed(started):
    net = Net()
    _, mon = started(REGIONS, net)
    torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
    assert mon.ledger.totals()["unclaimed"]["compiles"] == 1
    snap = mon.snapshot()
    assert {name: s["compiles"] for name, s in snap.items()} == {"blocks": 0, "head": 0, "tail": 0, "<unclaimed>": 1}


def test_a_failing_hook_is_counted_and_logged_once_and_never_reaches_the_step(started, events):
    net = Net()
    original = events._log

    def broken(level):
        log = original(level)

        def call(event, **kw):
            if event == "compile":
                raise ValueError("logger down")
            log(event, **kw)

        return call

    events._log = broken
    _, mon = started(REGIONS, net)
    outs = run(net, 2)
    assert len(outs) == 2
    assert mon.ledger.totals()["errors"]["hook"] == 8  # every compile's hook failed at its log line
    assert len(events.named("monitor_error")) == 1


def test_nothing_of_ours_runs_on_a_cache_hit(started):
    net = Net()
    _, mon = started(REGIONS.replace('module = "tail"', 'module = "tail"\nenabled = false\nreason = "t"'), net)
    run(net, 1)
    calls = []
    mon._start_cb, original = (lambda a: calls.append(a)), mon._start_cb
    from torch._dynamo.callback import callback_handler

    callback_handler.start_callbacks.append(mon._start_cb)
    run(net, 5)
    callback_handler.start_callbacks.remove(mon._start_cb)
    mon._start_cb = original
    assert calls == []


def test_the_stack_holds_no_compile_wrapper_outside_a_compile():
    assert compiled_callable() is None


def test_a_torch_nn_builtin_region_compiles_and_is_attributed(started) -> None:
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    _, mon = started('[[region]]\nname = "proj"\nmodule = "0"\n', model)
    model(torch.randn(3, 4))
    model(torch.randn(3, 4))
    assert mon.snapshot()["proj"]["compiles"] == 1


def test_no_monitor_code_runs_on_a_steady_state_step(started):
    import sys
    from pathlib import Path

    import monitor as monitor_pkg

    net = Net()
    _, mon = started(REGIONS, net)
    run(net, 3)  # compiles, recompiles of the counter region, and warm cache entries for the others
    ours = str(Path(monitor_pkg.__file__).parent)
    calls: list[str] = []

    def profiler(frame, event, arg):  # every Python call and C call made while the steps run
        if event == "call" and frame.f_code.co_filename.startswith(ours):
            calls.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    net.tail = Scaled(7)  # the Counting tail recompiles every call by design; steady state means cache hits only
    run(net, 2)
    sys.setprofile(profiler)
    try:
        run(net, 5)
    finally:
        sys.setprofile(None)
    assert calls == [] and mon.snapshot()["blocks"]["compiles"] == 3
