"""`[monitor] events_path`: every event the monitor logs also lands in a per-rank JSON-lines file for the report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from prometheus_client import CollectorRegistry
from torch import nn

from monitor.runtime import Monitor
from tests.monitor.conftest import HEADER, bind_applied
from tests.monitor.models import Counting

EVENTS = '[monitor]\nevents_path = "ev/events-{rank}.jsonl"\n'


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_logged_event_is_in_the_file_with_version_wall_time_and_rank(started, events, tmp_path):
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\nrecompile_budget = 1\n' + EVENTS, model)
    for _ in range(4):
        model(torch.randn(2, 8))
    mon.stop()
    got = lines(tmp_path / "ev" / "events-0.jsonl")
    assert [e["event"] for e in got] == [e["event"] for e in events.events]
    assert all(e["v"] == 1 and e["rank"] == 0 and e["world_size"] == 1 and e["pid"] == os.getpid() for e in got)
    assert all(isinstance(e["ts"], float) for e in got) and [e["ts"] for e in got] == sorted(e["ts"] for e in got)
    recompiles = [e for e in got if e["event"] == "recompile"]
    assert len(recompiles) == 3 and recompiles[0]["reason"] == "value" and "calls" in recompiles[0]["guard"]
    assert [e["budget_kind"] for e in got if e["event"] == "budget_exceeded"] == ["recompile_budget"]


def test_the_start_event_carries_the_contract_identity_region_budgets_and_environment(started, tmp_path):
    binding, mon = started('[[region]]\nname = "tail"\nmodule = ""\nrecompile_budget = 2\n' + EVENTS, Counting())
    mon.stop()
    start = lines(tmp_path / "ev" / "events-0.jsonl")[0]
    assert start["event"] == "monitor_started"
    assert start["contract"] == "test-net" and start["contract_sha256"] == binding.contract.sha256
    assert start["torch"] == torch.__version__ and start["python"] and start["hostname"]
    assert start["region_settings"]["tail"]["recompile_budget"] == 2
    assert start["region_settings"]["tail"]["on_breach"] == "alert"


def test_the_final_event_points_at_the_report_command_for_every_ranks_file(started, events, tmp_path):
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\n' + EVENTS, Counting())
    mon.stop()
    (stopped,) = events.named("monitor_stopped")
    assert stopped["report"] == f"compile-contract report '{tmp_path / 'ev' / 'events-*.jsonl'}' -o compile-report/"


def test_compile_lines_reach_the_file_even_when_the_log_level_hides_them(write_contract, tmp_path, caplog):
    caplog.set_level("WARNING", logger="torch_compile_contract.monitor")
    model = Counting()
    binding = bind_applied(write_contract(HEADER + '[[region]]\nname = "tail"\nmodule = ""\n' + EVENTS), model)
    with Monitor(binding, registry=CollectorRegistry(), serve=False, environ={"RANK": "3", "WORLD_SIZE": "4"}):
        model(torch.randn(2, 8))
    got = lines(tmp_path / "ev" / "events-3.jsonl")
    assert [e["event"] for e in got if e["event"] == "compile"] == ["compile"]
    assert all(e["rank"] == 3 and e["world_size"] == 4 for e in got)
    assert not [r for r in caplog.records if '"compile"' in r.getMessage()]


class Trained(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)).sum()


def test_the_lazily_compiled_backward_is_an_event_of_its_region(started, events, tmp_path):
    model = Trained()
    body = '[[region]]\nname = "mlp"\nmodule = ""\nbackend = "aot_eager"\n' + EVENTS
    _, mon = started(body, model)
    model(torch.randn(4, 8)).backward()
    mon.stop()
    (aux,) = events.named("aux_compile")
    assert aux["region"] == "mlp" and aux["trigger"] == "lazy_backward" and aux["seconds"] >= 0
    (compile_,) = events.named("compile")
    assert aux["compile_id"] == compile_["compile_id"]
    assert [e["event"] for e in lines(tmp_path / "ev" / "events-0.jsonl")].count("aux_compile") == 1


def test_an_events_path_that_cannot_be_opened_is_counted_and_the_run_goes_on(started, events, tmp_path):
    (tmp_path / "blocked").write_text("a file where the directory should be")
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\n[monitor]\nevents_path = "blocked/ev.jsonl"\n', model)
    model(torch.randn(2, 8))
    assert mon.snapshot()["tail"]["compiles"] == 1
    assert mon.ledger.totals()["errors"]["events"] == 1
    (error,) = events.named("monitor_error")
    assert error["kind"] == "events" and "blocked" in error["error"]
    mon.stop()
    assert "report" not in events.named("monitor_stopped")[0]


def test_a_failing_write_is_counted_never_raised_into_the_step(started, tmp_path):
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\n' + EVENTS, model)
    assert mon._events is not None and mon._events._file is not None
    mon._events._file.close()  # the disk went away: every later write fails
    for _ in range(3):
        model(torch.randn(2, 8))
    assert mon.snapshot()["tail"]["compiles"] == 3
    assert mon.ledger.totals()["errors"]["events"] >= 3
    mon.stop()


class Squares(torch.utils.data.Dataset):
    """Each item runs the compiled region inside a forked DataLoader worker (new shapes: compiles in the child)."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> torch.Tensor:
        with torch.no_grad():
            return self.model(torch.ones(5 + i, 8)).sum()


def test_forked_dataloader_workers_never_write_to_the_parents_file(started, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a CUDA host cannot compile in fork-started workers at all (see test_monitor_faults)")
    model = Counting()
    _, mon = started('[[region]]\nname = "tail"\nmodule = ""\n' + EVENTS, model)
    model(torch.randn(2, 8))
    loader = torch.utils.data.DataLoader(
        Squares(model), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=120
    )
    assert len(list(loader)) == 4
    mon.stop()
    got = lines(tmp_path / "ev" / "events-0.jsonl")
    assert {e["pid"] for e in got} == {os.getpid()}
    assert [e["event"] for e in got][-1] == "monitor_stopped"
