"""Compiles the contract did not make: an engine's whole-model compile is counted, engine regions are verified."""

from __future__ import annotations

import re

import pytest
import torch
from prometheus_client import CollectorRegistry, generate_latest
from torch import nn

import monitor
from monitor.actions import RecompileBudgetExceeded
from tests.monitor.conftest import bind_applied

HEADER = '[contract]\nname = "engine-net"\n[defaults]\nbackend = "eager"\n'


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def watch(write_contract, events, body: str, model, **kw):
    binding = bind_applied(write_contract(HEADER + body), model)
    return binding, monitor.start(binding, registry=CollectorRegistry(), logger=events, serve=False, **kw)


def sample(registry, name: str, **labels: str) -> float | None:
    value = registry.get_sample_value(name, labels)
    return value


def test_a_whole_model_compile_outside_every_region_is_counted_through_a_shape_storm(write_contract, events):
    """The monitor never reads zero: torch.compile(model) recompiling on new sequence lengths counts per code."""
    net = Net()
    compiled = torch.compile(net, backend="eager", dynamic=False)
    body = '[[region]]\nname = "head"\nmodule = "head"\nenabled = false\nreason = "kept eager"\n'
    _, mon = watch(write_contract, events, body, net)
    with mon, torch.no_grad():
        for n in (1, 2, 3, 4):
            compiled(torch.ones(n, 8))
        totals = mon.ledger.totals()["unclaimed"]
        assert totals["compiles"] == 4 and totals["recompiles"] == 3
        assert totals["codes"] == {"Net.forward": (4, 3)}
        assert sample(mon.registry, "torch_compile_unclaimed_compiles_total", code="Net.forward") == 4
        assert sample(mon.registry, "torch_compile_unclaimed_recompiles_total", code="Net.forward") == 3
    seen = events.named("unclaimed_compile")
    assert [e["recompile"] for e in seen] == [False, True, True, True]
    assert seen[1]["guard"] and re.search(r"test_engine_compiles\.py:\d+$", seen[0]["site"])
    assert seen[1]["level"] == "warning" and seen[1]["reason"] == "shape"


def test_the_snapshot_and_the_stop_summary_have_an_unclaimed_entry_for_a_whole_model_compile(write_contract, events):
    """`snapshot()` and `monitor_stopped` read a whole-model compile outside every region as an `<unclaimed>` entry
    (the report's row), with the keys a region's entry has; nothing unclaimed, no entry."""
    net = Net()
    compiled = torch.compile(net, backend="eager", dynamic=False)
    body = '[[region]]\nname = "head"\nmodule = "head"\nenabled = false\nreason = "kept eager"\n'
    body += "[monitor]\nunclaimed_compile_budget = 2\n"
    _, mon = watch(write_contract, events, body, net)
    with mon, torch.no_grad():
        assert "<unclaimed>" not in mon.snapshot()
        for n in (1, 2, 3):
            compiled(torch.ones(n, 8))
        snap = mon.snapshot()
    entry = snap["<unclaimed>"]
    assert (entry["compiles"], entry["recompiles"], entry["breached"]) == (3, 2, True)
    assert entry["breaches"] == ["unclaimed_compile_budget"] and entry["recompiles_by_reason"]["shape"] == 2
    assert entry["codes"] == {"Net.forward": {"compiles": 3, "recompiles": 2}} and entry["compile_seconds"] > 0
    assert set(snap["head"]) <= set(entry)
    [stopped] = events.named("monitor_stopped")
    assert entry["graph_breaks"] == 3  # the disabled `head` breaks each compile's graph
    assert stopped["summary"]["<unclaimed>"] == "compiles=3 recompiles=2 graph_breaks=3 BREACHED"


def test_an_outer_compile_names_the_regions_it_traces_into_its_graph(write_contract, events):
    """A compile of the model around the layer regions says which regions it inlines (they never compile alone)."""
    net = Net()
    _, mon = watch(write_contract, events, '[[region]]\nname = "layers"\nmodule = "layers.*"\n', net)
    outer = torch.compile(net, backend="eager")
    with mon, torch.no_grad():
        outer(torch.ones(2, 8))
        assert mon.snapshot()["layers"]["compiles"] == 0
    (seen,) = events.named("unclaimed_compile")
    assert seen["contains_regions"] == ["layers"] and seen["level"] == "warning"


def test_unclaimed_code_labels_are_capped(write_contract, events):
    """Past 32 distinct compiled code names, the rest count under `<other>` (bounded metric labels)."""
    net = Net()
    _, mon = watch(write_contract, events, '[[region]]\nname = "head"\nmodule = "head"\n', net)
    with mon, torch.no_grad():
        for i in range(34):  # 34 distinct compiled codes, as many helpers of an engine would be
            ns: dict = {"nn": nn}
            exec(f"class Helper{i}(nn.Module):\n    def forward(self, x):\n        return x + {i}\n", ns)
            torch.compile(ns[f"Helper{i}"](), backend="eager")(torch.ones(2))
        codes = mon.ledger.totals()["unclaimed"]["codes"]
    assert len(codes) == 33 and codes["<other>"] == (2, 0)


def test_the_unclaimed_budget_alerts_once_and_exports_its_gauges(write_contract, events):
    """`unclaimed_compile_budget = 1`: the second unclaimed compile is one budget_exceeded event, gauge at 1."""
    net = Net()
    body = '[monitor]\nunclaimed_compile_budget = 1\n[[region]]\nname = "head"\nmodule = "head"\n'
    _, mon = watch(write_contract, events, body, net)
    f = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
    with mon:
        for n in (1, 2, 3):
            f(torch.ones(n))
        text = generate_latest(mon.registry).decode()
    (breach,) = events.named("budget_exceeded")
    assert breach["region"] == "<unclaimed>" and breach["budget_kind"] == "unclaimed_compile_budget"
    assert breach["count"] == 2 and breach["action"] == "alert"
    assert "torch_compile_unclaimed_budget_exceeded 1.0" in text
    assert "torch_compile_unclaimed_compile_budget 1.0" in text


def test_fail_on_the_unclaimed_budget_raises_at_the_next_unclaimed_compile(write_contract, events):
    """`unclaimed_on_breach = "fail"`: the compile after the breach raises RecompileBudgetExceeded in its thread."""
    net = Net()
    body = (
        '[monitor]\nunclaimed_compile_budget = 1\nunclaimed_on_breach = "fail"\n'
        '[[region]]\nname = "head"\nmodule = "head"\n'
    )
    _, mon = watch(write_contract, events, body, net)
    f = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
    with mon:
        f(torch.ones(1))
        f(torch.ones(2))  # over the budget: arms fail
        with pytest.raises(Exception) as raised:
            f(torch.ones(3))
        with torch.no_grad():
            net.head(torch.ones(1, 8))  # a region's compile still runs
    cause = monitor.breach_of(raised.value)
    assert isinstance(cause, RecompileBudgetExceeded) and "unclaimed compile budget" in str(cause)


def test_an_unclaimed_fail_is_recognised_through_dynamos_wrapper_by_breach_of(write_contract, events):
    """Dynamo re-raises the armed breach as InternalTorchDynamoError `from None` (no `__cause__`);
    `monitor.breach_of` finds it all the same, and returns a region's breach raised as itself, None for others."""
    from torch._dynamo.exc import InternalTorchDynamoError

    net = Net()
    body = (
        '[monitor]\nunclaimed_compile_budget = 0\nunclaimed_on_breach = "fail"\n'
        '[[region]]\nname = "head"\nmodule = "head"\n'
    )
    _, mon = watch(write_contract, events, body, net)
    f = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
    with mon:
        f(torch.ones(1))  # over the budget: arms fail
        with pytest.raises(InternalTorchDynamoError) as raised:
            f(torch.ones(2))
    assert str(raised.value).startswith("RecompileBudgetExceeded: region '<unclaimed>' exceeded its unclaimed")
    breach = monitor.breach_of(raised.value)
    assert isinstance(breach, RecompileBudgetExceeded)
    assert (breach.region, breach.kind, breach.count, breach.budget) == (
        "<unclaimed>",
        "unclaimed_compile_budget",
        1,
        0,
    )
    direct = RecompileBudgetExceeded("layers", 2, 1, ())
    assert monitor.breach_of(direct) is direct and monitor.breach_of(ValueError("other")) is None


def test_a_lazy_engine_compile_with_other_settings_is_a_breach_and_eager_switches_it_off(write_contract, events):
    """verify_at = "first_compile": the engine compiles `layers.0` after start with fullgraph=False where the contract
    says true; the first compile is a breach, and on_breach = "eager" puts the engine's compile aside."""
    net = Net()
    body = (
        '[[region]]\nname = "layers"\nmodule = "layers.*"\ncompiled_by = "engine"\nverify_at = "first_compile"\n'
        'fullgraph = true\non_breach = "eager"\n'
    )
    binding, mon = watch(write_contract, events, body, net)
    for block in net.layers:  # the engine compiles lazily, after enforce
        block.compile(backend="eager")
    with mon, torch.no_grad():
        net(torch.ones(2, 8))
        assert mon.snapshot()["layers"]["compiles"] >= 1  # blocks of one class share one compile (torch >= 2.5)
    (mismatch,) = events.named("engine_compile_mismatch")
    assert "fullgraph True (contract) vs False (engine)" in mismatch["differences"]
    (breach,) = events.named("budget_exceeded")
    assert breach["budget_kind"] == "engine_settings" and breach["action"] == "eager"
    assert all(block._compiled_call_impl is None for block in net.layers)
    assert binding.regions["layers"].state == "eager"


def test_a_lazy_engine_call_served_from_another_models_compile_is_verified_and_marked(write_contract, events):
    """Two models of one class: the first compiled by the engine without a contract; the second's blocks, compiled
    lazily with the same engine settings after start, run the first model's graphs and fire no compile. The
    snapshot still verifies them (the contract says fullgraph = true) and marks them served."""
    first, net = Net(), Net()
    for block in first.layers:
        block.compile(backend="eager")
    with torch.no_grad():
        first(torch.ones(2, 8))
    body = (
        '[[region]]\nname = "layers"\nmodule = "layers.*"\ncompiled_by = "engine"\nverify_at = "first_compile"\n'
        "fullgraph = true\n"
    )
    _, mon = watch(write_contract, events, body, net)
    for block in net.layers:  # the engine compiles lazily, after enforce
        block.compile(backend="eager")
    with mon, torch.no_grad():
        net(torch.ones(2, 8))
        snap = mon.snapshot()["layers"]
    [mismatch] = events.named("engine_compile_mismatch")  # one per region and difference, not per block
    assert "fullgraph True (contract) vs False (engine)" in mismatch["differences"]
    assert (mismatch["module"], mismatch["served"], mismatch["instances"]) == ("layers.0", True, 2)
    assert snap["compiles"] == 0 and snap["served_instances"] == 2 and snap["breached"]
    assert [(e["module"], e["instances"]) for e in events.named("served_compile")] == [("layers.0", 2)]


def test_an_engine_region_compiled_as_the_contract_says_is_attributed_per_block(write_contract, events):
    """torchtitan's block.compile(): every compile is the region's (blocks of one class share theirs), no mismatch,
    nothing unclaimed."""
    net = Net()
    for block in net.layers:
        block.compile(backend="eager", fullgraph=True)
    body = '[[region]]\nname = "layers"\nmodule = "layers.*"\ncompiled_by = "engine"\nfullgraph = true\n'
    binding, mon = watch(write_contract, events, body, net)
    assert all(t.engine is not None for t in binding.regions["layers"].targets)
    with mon, torch.no_grad():
        net(torch.ones(2, 8))
        snap = mon.snapshot()["layers"]
        assert snap["compiles"] >= 1 and snap["recompiles"] == 0
        assert mon.ledger.totals()["unclaimed"]["compiles"] == 0
    assert events.named("engine_compile_mismatch") == []


def test_fail_on_an_engine_region_raises_at_its_next_call(write_contract, events):
    """on_breach = "fail" arms the engine's compile slot: the region's next call raises the breach."""
    net = Net()
    for block in net.layers:
        block.compile(backend="eager", dynamic=False)
    body = (
        '[[region]]\nname = "layers"\nmodule = "layers.*"\ncompiled_by = "engine"\nrecompile_budget = 0\n'
        'dynamic = false\non_breach = "fail"\n'
    )
    _, mon = watch(write_contract, events, body, net, manual_warmup=True)
    with mon, torch.no_grad():
        net(torch.ones(2, 8))
        mon.mark_warm()
        with pytest.raises(RecompileBudgetExceeded, match="exceeded its recompile budget"):
            net(torch.ones(3, 8))  # layers.0 recompiles after warm-up: over budget; layers.1, called next, raises
    assert events.named("engine_compile_mismatch") == []


def test_the_report_has_a_row_for_unclaimed_compiles_with_their_guards(write_contract, events, tmp_path, capsys):
    """`compile-contract report` shows the engine's own compiles as an `<unclaimed>` row: counts and the guard."""
    from contract.cli import main
    from monitor.report import load

    net = Net()
    body = f'[monitor]\nevents_path = "{tmp_path}/events.jsonl"\n[[region]]\nname = "head"\nmodule = "head"\n'
    compiled = torch.compile(net, backend="eager", dynamic=False)
    _, mon = watch(write_contract, events, body, net)
    with mon, torch.no_grad():
        for n in (1, 2):
            compiled(torch.ones(n, 8))
    run = load([str(tmp_path / "events.jsonl")])
    cell = run.regions["<unclaimed>"].merged
    assert (cell.compiles, cell.recompiles) == (2, 1)
    ((category, guard, _, _), _n) = cell.reasons.most_common(1)[0]
    assert category == "shape" and "x" in guard
    assert main(["report", str(tmp_path / "events.jsonl"), "-o", str(tmp_path / "report")]) == 0
    capsys.readouterr()
    page = (tmp_path / "report" / "report.html").read_text()
    assert 'data-region="&lt;unclaimed&gt;"' in page
    assert "Net.forward" in (tmp_path / "report" / "trace.json").read_text()


def test_a_compiled_function_is_named_by_its_own_qualified_name(write_contract, events):
    """A compiled sampler counts under its own name on torch 2.11 too (where Dynamo compiles wrap_inline's frame)."""
    net = Net()

    def sampler(logits):
        return torch.softmax(logits, -1)

    _, mon = watch(write_contract, events, '[[region]]\nname = "head"\nmodule = "head"\n', net)
    with mon:
        torch.compile(sampler, backend="eager")(torch.ones(2, 4))
    (seen,) = events.named("unclaimed_compile")
    assert seen["code"] == sampler.__qualname__ and "sampler" in seen["name"]


def test_an_armed_unclaimed_fail_never_raises_in_a_claimed_regions_lazy_backward(write_contract, events):
    """After the unclaimed budget armed `fail`, a region's own backward (compiled lazily, no compile wrapper on the
    stack) still runs: only compiles the in-progress record finds unclaimed raise."""
    net = Net()
    body = (
        '[monitor]\nunclaimed_compile_budget = 0\nunclaimed_on_breach = "fail"\n'
        '[[region]]\nname = "head"\nmodule = "head"\nbackend = "aot_eager"\n'
    )
    _, mon = watch(write_contract, events, body, net)
    f = torch.compile(lambda x: x * 2, backend="eager")
    with mon:
        f(torch.ones(1))  # over the budget of 0: arms fail
        assert mon.ledger.totals()["unclaimed"]["breached"]
        net.head(torch.ones(2, 8, requires_grad=True)).sum().backward()  # the region's forward, then its backward
        snap = mon.snapshot()["head"]
    assert snap["compiles"] == 1 and snap["backward_compiles"] == 1
