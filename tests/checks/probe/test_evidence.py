"""The probe's evidence under real torch.compile: every graph break Dynamo logs (CC403 by distinct sites per region
instance), generalizing recompiles (CC406 warning) versus storms (CC401 error), full source paths."""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from contract.checks.probe.run import probe
from contract.document.load import load
from contract.pipeline import check

HERE = str(Path(__file__).resolve())


def line_of(fn: Callable, text: str) -> int:
    """Line number of the first source line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


class TensorBranch(nn.Module):
    """A tensor in a Python `if`: Dynamo breaks ("generic_jump"), the graph-break counter does not see it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        if y.sum() > 0:
            y = y * 2
        return y


def chatter(y: torch.Tensor) -> torch.Tensor:
    print(end="")
    return y


class NestedPrint(nn.Module):
    """`print` in a helper called from forward: Dynamo logs the break twice (forward inlining it, then the helper's
    own frame), at the same line."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        y = chatter(y)
        return torch.relu(y)


class TwoSites(nn.Module):
    """Two different breaks in one forward: each compile stops at one, the instance has two sites."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        print(end="")
        y = torch.relu(y)
        if y.sum() > 0:
            y = y * 2
        return y


class Temperature(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.temperature = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) / self.temperature


class Counter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.scale = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.scale


def fixed_step(model: nn.Module, i: int) -> Any:
    with torch.no_grad():
        return model(torch.ones(2, 8) * (1 if i % 2 else -1))


def growing_batch(model: nn.Module, i: int) -> Any:
    with torch.no_grad():
        return model(torch.randn(2 + i, 8))


def float_schedule(model: nn.Module, i: int) -> Any:
    model.temperature = 1.0 + 0.1 * i
    return fixed_step(model, i)


def int_schedule(model: nn.Module, i: int) -> Any:
    model.scale = i + 2
    return fixed_step(model, i)


def contract_file(tmp_path: Path, steps: int = 8, **region: Any) -> Path:
    extra = "".join(
        f"{k} = {v!r}\n".replace("'", '"') if not isinstance(v, bool) else f"{k} = {str(v).lower()}\n"
        for k, v in region.items()
    )
    path = tmp_path / "c.toml"
    path.write_text(
        f'[contract]\nname = "p"\n[[region]]\nname = "r"\nmodule = ""\nbackend = "eager"\n{extra}'
        f"[probe]\nsteps = {steps}\n"
    )
    return path


def probe_findings(tmp_path: Path, model: nn.Module, step: Callable, steps: int = 8, **region: Any) -> list:
    _, _, findings = check(contract_file(tmp_path, steps, **region), model, step=step)
    return [f for f in findings if f.code.startswith("CC4")]


def raw_probe(tmp_path: Path, model: nn.Module, step: Callable, steps: int = 4, **region: Any):
    contract, _ = load(contract_file(tmp_path, steps, **region))
    return probe(contract, model, step, steps=steps)


# 1. Graph breaks the counter misses: the graph-break log sees them, with the source line.


def test_a_tensor_in_a_python_if_is_a_cc403_at_the_if_line(tmp_path):
    [finding] = probe_findings(tmp_path, TensorBranch(), fixed_step)
    line = line_of(TensorBranch.forward, "if y.sum()")
    assert finding.code == "CC403" and finding.severity == "error"
    assert "generic_jump" in finding.message and f"{HERE}:{line}" in finding.message


@pytest.mark.skipif(torch.__version__ < (2, 13), reason="measured on torch 2.13; older counters may see it")
def test_the_counter_alone_misses_the_tensor_branch_which_is_why_the_log_is_the_source(tmp_path):
    from torch._dynamo.utils import counters

    before = dict(counters["graph_break"])
    raw_probe(tmp_path, TensorBranch(), fixed_step)
    after = dict(counters["graph_break"])
    assert not any("generic_jump" in k for k in after if after[k] > before.get(k, 0))


def test_a_print_in_a_helper_is_logged_twice_at_one_site(tmp_path):
    result = raw_probe(tmp_path, NestedPrint(), fixed_step)
    breaks = [e.fields for e in result.named("graph_break")]
    line = line_of(chatter, "print(")
    assert len(breaks) == 2 and {b["site"] for b in breaks} == {f"{HERE}:{line}"}
    assert len({(b["site"], b["reason"]) for b in breaks}) == 1 and result.regions["r"]["budget_graph_breaks"] == 1


# 2. Budget semantics: distinct sites per region instance over the probe, not breaks per compile.


def test_one_site_reached_twice_fits_a_budget_of_one(tmp_path):
    assert probe_findings(tmp_path, NestedPrint(), fixed_step, graph_break_budget=1) == []
    [finding] = probe_findings(tmp_path, NestedPrint(), fixed_step, graph_break_budget=0)
    assert finding.code == "CC403" and "1 distinct graph-break site " in finding.message


def test_two_sites_exceed_a_budget_of_one_though_no_compile_breaks_twice(tmp_path):
    result = raw_probe(tmp_path, TwoSites(), fixed_step, graph_break_budget=1)
    per_compile = collections.Counter(e.fields["compile_id"] for e in result.named("graph_break"))
    assert max(per_compile.values()) == 1
    [finding] = probe_findings(tmp_path, TwoSites(), fixed_step, graph_break_budget=1)
    assert finding.code == "CC403" and "2 distinct graph-break sites" in finding.message
    for text in ("print(", "if y.sum()"):
        assert f"{HERE}:{line_of(TwoSites.forward, text)}" in finding.message
    assert probe_findings(tmp_path, TwoSites(), fixed_step, graph_break_budget=2) == []


def test_without_the_graph_break_log_the_counter_is_the_fallback(tmp_path, monkeypatch):
    import torch._dynamo.utils as dynamo_utils

    monkeypatch.delattr(dynamo_utils, "graph_break_reasons")
    [finding] = probe_findings(tmp_path, NestedPrint(), fixed_step)
    assert finding.code == "CC403" and "print" in finding.message


# 3. One generalizing recompile then stable: a warning (CC406). A storm stays CC401.


def test_a_growing_batch_under_dynamic_auto_is_a_cc406_warning_not_cc401(tmp_path):
    [finding] = probe_findings(tmp_path, Counter(), growing_batch)
    assert (finding.code, finding.severity) == ("CC406", "warning") and "size" in finding.message


def test_a_growing_batch_under_dynamic_false_recompiles_every_step_and_stays_cc401(tmp_path):
    [finding] = probe_findings(tmp_path, Counter(), growing_batch, dynamic=False)
    assert (finding.code, finding.severity) == ("CC401", "error") and "recompiled 7 times" in finding.message


def test_a_float_schedule_recompiles_once_then_is_an_input_cc406(tmp_path):
    [finding] = probe_findings(tmp_path, Temperature(), float_schedule)
    assert (finding.code, finding.severity) == ("CC406", "warning") and "float" in finding.message
    assert f"{HERE}:{line_of(Temperature.forward, 'self.temperature')}" in finding.fix


def test_a_float_schedule_storms_when_floats_are_specialized_and_stays_cc401(tmp_path):
    with torch._dynamo.config.patch(specialize_float=True):
        [finding] = probe_findings(tmp_path, Temperature(), float_schedule)
    assert (finding.code, finding.severity) == ("CC401", "error") and "recompiled 7 times" in finding.message
    assert "raise [probe] steps" not in finding.message  # a storm, not a recompile cut short by the probe's end


def test_an_int_schedule_is_a_storm_cc401_with_the_full_path_in_the_fix(tmp_path):
    [finding] = probe_findings(tmp_path, Counter(), int_schedule)
    assert (finding.code, finding.severity) == ("CC401", "error")
    assert finding.fix.startswith(f"remove the changing state at {HERE}:{line_of(Counter.forward, 'self.scale')}")


def test_a_generalizing_recompile_in_the_last_step_is_not_proven_stable_and_stays_cc401(tmp_path):
    [finding] = probe_findings(tmp_path, Counter(), growing_batch, steps=2)
    assert finding.code == "CC401" and "raise [probe] steps" in finding.message


def test_warmup_compiles_absorbing_the_recompile_gives_no_finding(tmp_path):
    assert probe_findings(tmp_path, Counter(), growing_batch, warmup_compiles=2) == []


# 5. Paths: Dynamo's shortened `# path:line` comment is made full again.


def test_guard_site_prefers_the_user_stack_trace_and_expands_a_shortened_comment_path():
    from compile_formats.reasons import guard_site

    reason = (
        "0/0: self.t == 1.0  # return x / self.t  # mp/x/m.py:7 in forward\nUser stack trace:\n"
        '  File "/tmp/x/m.py", line 7, in forward\n    return x / self.t'
    )
    assert guard_site(reason) == "/tmp/x/m.py:7"
    short = HERE[2:]  # what torch.utils._traceback.shorten_filename makes of a path outside torch's tree
    assert guard_site(f"0/0: self.t == 1.0  # return x  # {short}:12 in forward") == f"{HERE}:12"


# 6. torch 2.11: the adapter degrades when a private attribute is missing.


def test_a_skipped_frame_record_without_the_newer_fields_has_no_site():
    from monitor import _dynamo_records

    class Record:
        compile_id, fail_type, fail_reason, has_guarded_code = "0/0", "Unsupported", "graph break in loop", False

    assert _dynamo_records._fail_site(Record()) == ""


def test_without_the_graph_break_log_the_break_log_reads_the_counter(monkeypatch):
    import torch._dynamo.utils as dynamo_utils

    from monitor import _dynamo

    monkeypatch.delattr(dynamo_utils, "graph_break_reasons")
    log = _dynamo.BreakLog(_dynamo.counters())
    dynamo_utils.counters["graph_break"]["synthetic break"] += 2
    try:
        assert log.new() == ((("", "synthetic break"), ("", "synthetic break")), 0)
    finally:
        del dynamo_utils.counters["graph_break"]["synthetic break"]


# 4. The probe's evidence outranks the scan's reading.


class LargeBatchCounter(nn.Module):
    """Counts calls with large batches: the scan reads a certain counter, but the probe's inputs never take that
    branch, so over its steps the region compiles once and never recompiles."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.large = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 64:
            self.large += 1
        return self.lin(x)


def test_a_scan_error_the_probe_refutes_is_a_warning_that_says_so(tmp_path):
    path = contract_file(tmp_path)
    _, _, static = check(path, LargeBatchCounter())
    assert [(f.code, f.severity) for f in static] == [("CC301", "error")]
    _, _, probed = check(path, LargeBatchCounter(), step=fixed_step)
    [finding] = probed
    assert (finding.code, finding.severity) == ("CC301", "warning")
    assert "the probe ran the step 8 times and region 'r' never recompiled" in finding.message


def test_a_scan_error_the_probe_confirms_stays_an_error(tmp_path):
    class Counter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin, self.calls = nn.Linear(8, 8), 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            return self.lin(x) * self.calls

    _, _, found = check(contract_file(tmp_path), Counter(), step=fixed_step)
    assert ("CC301", "error") in [(f.code, f.severity) for f in found]
    assert not any("never recompiled" in f.message for f in found)
