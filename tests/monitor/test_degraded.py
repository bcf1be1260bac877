"""A torch that renamed an internal the monitor reads: one `monitor_degraded` event and a
`torch_compile_monitor_degraded{capability} 1` gauge per lost reading, the other readings still counting a real
compile, and never an exception in the user's job. Each test takes a real torch attribute away (monkeypatch) before the
monitor starts, as a newer torch would have it."""

from __future__ import annotations

import json
import urllib.request

import pytest
import torch
import torch._dynamo.callback
import torch._dynamo.convert_frame
import torch._dynamo.eval_frame
import torch._dynamo.utils
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from torch import nn

from monitor import _dynamo, _dynamo_records, _inductor
from monitor.capabilities import NAMES
from monitor.report import load
from monitor.runtime import Monitor
from tests.monitor.conftest import HEADER, Events, bind_applied

REGION = '[[region]]\nname = "r"\nmodule = ""\ngraph_break_budget = 10\n'


class OneBreak(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        torch._dynamo.graph_break()
        return y * 2


def samples(registry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of one scrape of the registry (prometheus_client's text format, parsed back)."""
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def degraded(scrape: dict) -> dict[str, float]:
    return {dict(k[1])["capability"]: v for k, v in scrape.items() if k[0] == "torch_compile_monitor_degraded"}


def region(scrape: dict, name: str) -> float:
    return scrape[(name, (("region", "r"),))]


def run(model: nn.Module) -> torch.Tensor:
    """The user's step: the region compiled as the contract applied it, called twice (the second is a cache hit)."""
    with torch.no_grad():
        model(torch.ones(2, 4))
        return model(torch.ones(2, 4))


def lost_events(events: Events) -> dict[str, dict]:
    return {e["capability"]: e for e in events.named("monitor_degraded")}


def test_every_capability_is_probed_and_this_torch_has_them_all(started, events: Events) -> None:
    probed = [c.name for c in (*_dynamo.probe(), *_dynamo_records.probe(), *_inductor.probe())]
    assert sorted(probed) == sorted(NAMES) and len(set(probed)) == len(probed)
    model = OneBreak()
    _, mon = started(REGION, model)
    run(model)
    assert mon.capabilities.lost == () and events.named("monitor_degraded") == []
    assert degraded(samples(mon.registry)) == dict.fromkeys(NAMES, 0.0)


def test_lost_graph_break_reasons_fall_back_to_the_counter_and_say_so(started, events: Events, monkeypatch) -> None:
    monkeypatch.delattr(torch._dynamo.utils, "graph_break_reasons")
    model = OneBreak()
    _, mon = started(REGION, model)
    expected = model.lin(torch.ones(2, 4)) * 2
    assert torch.equal(run(model), expected)
    [event] = events.named("monitor_degraded")
    assert event["level"] == "warning" and event["capability"] == "graph_break_reasons"
    assert event["reads"] == "torch._dynamo.utils.graph_break_reasons"
    assert event["torch"] == torch.__version__
    assert "counters['graph_break']" in event["effect"] and "without their file:line site" in event["effect"]
    scrape = samples(mon.registry)
    assert degraded(scrape) == {n: float(n == "graph_break_reasons") for n in NAMES}
    assert region(scrape, "torch_compile_compiles_total") >= 1
    assert region(scrape, "torch_compile_graph_breaks_total") >= 1  # from the counter
    assert [e["site"] for e in events.named("graph_break")] == [""] * len(events.named("graph_break"))


def test_lost_counters_and_break_reasons_leave_compiles_counting(started, events: Events, monkeypatch) -> None:
    monkeypatch.delattr(torch._dynamo.utils, "graph_break_reasons")
    monkeypatch.delattr(torch._dynamo.utils, "counters")  # torch keeps its own reference: it compiles on
    model = OneBreak()
    _, mon = started(REGION, model)
    run(model)
    lost = lost_events(events)
    assert set(lost) == {"graph_break_reasons", "dynamo_counters"}
    assert lost["dynamo_counters"]["reads"] == "torch._dynamo.utils.counters"
    assert "torch_compile_cache_lookups_total stays 0" in lost["dynamo_counters"]["effect"]
    assert lost["graph_break_reasons"]["effect"].startswith("graph breaks are not counted")
    scrape = samples(mon.registry)
    assert {n for n, v in degraded(scrape).items() if v} == {"graph_break_reasons", "dynamo_counters"}
    assert region(scrape, "torch_compile_compiles_total") >= 1
    assert mon.snapshot()["r"]["compiles"] >= 1


def test_lost_compile_callbacks_never_break_the_users_job(started, events: Events, monkeypatch) -> None:
    handler = torch._dynamo.callback.callback_handler
    monkeypatch.delattr(type(handler), "register_start_callback")
    model = OneBreak()
    _, mon = started(REGION, model)
    expected = model.lin(torch.ones(2, 4)) * 2
    assert torch.equal(run(model), expected)
    assert set(lost_events(events)) == {"compile_events", "reset_tracking"}
    assert "every torch_compile_* count stays 0" in lost_events(events)["compile_events"]["effect"]
    scrape = samples(mon.registry)
    assert degraded(scrape)["compile_events"] == 1 and region(scrape, "torch_compile_compiles_total") == 0
    assert mon._start_cb not in handler.start_callbacks and mon._end_cb not in handler.end_callbacks
    mon.stop()
    assert [e for e in events.events if e["event"] == "monitor_error"] == []


def test_lost_reset_hook_still_counts_compiles(started, events: Events, monkeypatch) -> None:
    handler = torch._dynamo.callback.callback_handler
    monkeypatch.delattr(type(handler), "clear")  # torch._dynamo.reset() needs it: not called while it is away
    model = OneBreak()
    _, mon = started(REGION, model)
    run(model)
    assert set(lost_events(events)) == {"reset_tracking"}
    assert "clear" not in vars(handler)  # no keeper shadows a method torch does not have
    scrape = samples(mon.registry)
    assert degraded(scrape)["reset_tracking"] == 1 and region(scrape, "torch_compile_compiles_total") >= 1


def test_a_renamed_compile_wrapper_attributes_nothing_and_arms_no_unclaimed_fail(
    started, events: Events, monkeypatch
) -> None:
    context = torch._dynamo.eval_frame._TorchDynamoContext
    original = context.__call__

    def renamed(self, fn):  # a newer torch's refactor: `compile_wrapper` is nowhere in eval_frame.py any more
        return original(self, fn)

    monkeypatch.setattr(context, "__call__", renamed)
    model = OneBreak()
    body = REGION + '[monitor]\nunclaimed_compile_budget = 0\nunclaimed_on_breach = "fail"\n'
    _, mon = started(body, model)
    run(model)
    torch.compile(lambda x: x - 1, backend="eager")(torch.ones(1))  # would be unclaimed, over budget, armed to fail
    torch.compile(lambda x: x - 2, backend="eager")(torch.ones(1))
    assert set(lost_events(events)) == {"region_attribution"}
    assert "no compile is counted as unclaimed" in lost_events(events)["region_attribution"]["effect"]
    scrape = samples(mon.registry)
    assert degraded(scrape)["region_attribution"] == 1
    assert events.named("unclaimed_compile") == [] and events.named("budget_exceeded") == []


def test_a_renamed_compile_function_loses_reasons_and_the_limit_warning_only(
    started, events: Events, monkeypatch
) -> None:
    original = torch._dynamo.convert_frame._compile

    def _compile_v2(*args, **kwargs):  # renamed: its locals and its warning text are no longer found
        return original(*args, **kwargs)

    monkeypatch.setattr(torch._dynamo.convert_frame, "_compile", _compile_v2)
    model = OneBreak()
    _, mon = started(REGION, model)
    run(model)
    assert set(lost_events(events)) == {"recompile_reasons", "recompile_limit_warning"}
    assert lost_events(events)["recompile_limit_warning"]["reads"] == (
        'the "torch._dynamo hit config.*" warning of logger torch._dynamo.convert_frame'
    )
    scrape = samples(mon.registry)
    assert {n for n, v in degraded(scrape).items() if v} == {"recompile_reasons", "recompile_limit_warning"}
    assert region(scrape, "torch_compile_compiles_total") >= 1
    assert region(scrape, "torch_compile_graph_breaks_total") >= 1


def test_lost_compilation_metrics_and_cache_lookups_are_reported(write_contract, events: Events, monkeypatch) -> None:
    from torch._functorch._aot_autograd import autograd_cache
    from torch._inductor import codecache

    monkeypatch.delattr(torch._dynamo.utils, "_compilation_metrics")  # torch logs its own failed append, compiles on
    monkeypatch.delattr(torch._dynamo.utils, "get_compilation_metrics")
    monkeypatch.delattr(codecache.FxGraphCache, "load_with_key")
    monkeypatch.delattr(autograd_cache.AOTAutogradCache, "try_load")
    model = OneBreak()
    binding = bind_applied(write_contract(HEADER + REGION), model)
    mon = Monitor(binding, registry=CollectorRegistry(), logger=events, serve=False, record_keys=True)
    try:  # record_keys: the recording `compile-contract warm` makes would wrap the lookups
        run(model)
    finally:
        mon.stop()
    lost = lost_events(events)
    assert set(lost) == {"compilation_metrics", "fx_graph_lookups", "aot_autograd_lookups"}
    assert "neither logged nor counted as graph breaks" in lost["compilation_metrics"]["effect"]
    assert lost["fx_graph_lookups"]["reads"] == "torch._inductor.codecache.FxGraphCache.load_with_key"
    assert not mon.cold.active
    scrape = samples(mon.registry)
    assert {n for n, v in degraded(scrape).items() if v} == set(lost)
    assert region(scrape, "torch_compile_compiles_total") >= 1
    assert region(scrape, "torch_compile_graph_breaks_total") >= 1


def test_the_gauge_is_served_over_http_and_the_event_is_in_the_file_and_report(
    started, events: Events, monkeypatch, tmp_path
) -> None:
    monkeypatch.delattr(torch._dynamo.utils, "graph_break_reasons")
    model = OneBreak()
    body = REGION + f'[monitor]\nport = 0\nevents_path = "{tmp_path}/events.jsonl"\n'
    _, mon = started(body, model, serve=True)
    run(model)
    with urllib.request.urlopen(f"http://127.0.0.1:{mon.port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    assert 'torch_compile_monitor_degraded{capability="graph_break_reasons"} 1.0' in text
    assert 'torch_compile_monitor_degraded{capability="dynamo_counters"} 0.0' in text
    mon.stop()
    lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    [line] = [e for e in lines if e["event"] == "monitor_degraded"]
    assert line["level"] == "warning" and line["capability"] == "graph_break_reasons" and line["torch"]
    report = load([str(tmp_path / "events.jsonl")])  # `compile-contract report` says so among what needs care
    assert [n for n in report.notes if "monitor_degraded" in n] == [
        f"rank 0: the monitor could not read graph_break_reasons from torch {torch.__version__} (`monitor_degraded`): "
        + line["effect"]
    ]
    assert not report.reading.notes


@pytest.mark.parametrize("name", NAMES)
def test_every_capability_names_what_it_reads_and_what_is_lost(name: str) -> None:
    [cap] = [c for c in (*_dynamo.probe(), *_dynamo_records.probe(), *_inductor.probe()) if c.name == name]
    assert cap.available and cap.reads and cap.effect and "\n" not in cap.effect
