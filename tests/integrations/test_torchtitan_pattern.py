"""torchtitan's per-block compile (reproduced in titan_like.py: activation checkpointing, then per-block compile in
today's in-place form or the earlier re-registered wrapper, then FSDP2) under an engine region: verified on every
block, its compiles attributed to the block instance that compiled, a block the engine left out named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.integrations.session import Session
from contract.pipeline import ContractViolation
from tests.distributed.launch import run_plain
from tests.integrations import titan_like as T
from tests.monitor.conftest import Events

LAYERS = """
[contract]
name = "titan"
[defaults]
backend = "eager"
fullgraph = true
compiled_by = "engine"
[[region]]
name = "layers"
module = "layers.*"
recompile_budget = 4
[distributed]
timeout_s = 20
"""


def parallelized(form: str, **kw) -> T.Decoder:
    """AC then per-block compile, as parallelize_llama orders them (FSDP2 needs a job: see the job test)."""
    model = T.Decoder()
    T.apply_ac(model)
    T.apply_compile(model, "eager", form=form, **kw)
    return model


@pytest.mark.timeout(300)
@pytest.mark.parametrize("form", ["inplace", "wrapped"])
def test_both_compile_forms_under_fsdp2_are_verified_and_counted_per_block_in_a_job(tmp_path: Path, form) -> None:
    """Two gloo ranks, AC -> compile -> FSDP2: the engine region starts (every block verified), the blocks' compiles
    are attributed to the block instance that compiled (`layers.0`: the others reuse its code), a new sequence length
    is one recompile with its guard, nothing compiles unclaimed."""
    path = tmp_path / "c.toml"
    path.write_text(LAYERS)
    runs = run_plain(["-m", "tests.integrations.titan_worker", form, str(path)], 2, timeout=240)
    assert [r.returncode for r in runs] == [0, 0], [(r.stdout[-800:], r.stderr[-1500:]) for r in runs]
    for run in runs:
        snap = json.loads(run.stdout.split("SNAPSHOT ", 1)[1].splitlines()[0])
        region, events = snap["region"], snap["compiles"]
        assert region["compiles"] == 2 and region["recompiles"] == 1 and not region["breached"], region
        assert {(e["module"], e.get("method")) for e in events if e["event"] == "compile"} == {("layers.0", "forward")}
        [recompile] = [e for e in events if e["event"] == "recompile"]
        assert "size mismatch" in recompile["guard"] and recompile["counted"]
        assert not any(e["event"] == "engine_compile_mismatch" for e in events)
        assert snap["unclaimed"]["compiles"] == 0


@pytest.mark.parametrize("form", ["inplace", "wrapped"])
def test_a_block_the_engine_did_not_compile_is_named_at_start(write_contract, form) -> None:
    """One block left out of the per-block compile: CC901 names that block's path, in either form."""
    model = parallelized(form, skip=("1",))
    with pytest.raises(ContractViolation) as info:
        Session(write_contract(LAYERS), serve=False, logger=Events()).start(model)
    [finding] = [f for f in info.value.findings if f.severity == "error"]
    assert finding.code == "CC901" and "layers.1.forward" in finding.message and "layers.0" not in finding.message


@pytest.mark.parametrize("form", ["inplace", "wrapped"])
def test_blocks_compiled_with_fullgraph_against_a_contract_without_it_are_refused(write_contract, form) -> None:
    """torchtitan compiles with fullgraph=True; a contract saying fullgraph = false is CC902 naming both values."""
    model = parallelized(form)
    with pytest.raises(ContractViolation) as info:
        Session(write_contract(LAYERS.replace("fullgraph = true", "fullgraph = false")), serve=False).start(model)
    [finding] = [f for f in info.value.findings if f.severity == "error"]
    assert finding.code == "CC902" and "fullgraph" in finding.message
