"""What one rank tells alone: a rank of several whose verdict stays local (CC808), automatic dynamic shapes on
several ranks without compiler collectives or a job id (CC809); nothing at all for a single process."""

from __future__ import annotations

import pytest
import torch

from contract.demo import build_model
from contract.pipeline import check

CONTRACT = '[contract]\nname = "c"\n[[region]]\nname = "layers"\nmodule = "layers.*"\nbackend = "eager"\n{extra}'


def codes(write_contract, extra: str = "") -> set[str]:
    _, _, findings = check(write_contract(CONTRACT.format(extra=extra)), build_model())
    return {f.code for f in findings}


def test_a_single_process_gets_no_rank_finding(write_contract, monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert not {c for c in codes(write_contract) if c.startswith("CC8")}


def test_one_rank_of_several_without_a_process_group_is_warned_that_its_verdict_is_local(write_contract, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "8")
    found = codes(write_contract, "dynamic = false\n")
    assert "CC808" in found and "CC809" not in found


@pytest.mark.parametrize(
    ("collectives", "job", "expected"), [(False, None, True), (True, "job-1", False), (True, None, True)]
)
def test_automatic_dynamic_regions_on_several_ranks_need_compiler_collectives_and_a_job_id(
    write_contract, monkeypatch, collectives, job, expected
):
    monkeypatch.setenv("WORLD_SIZE", "8")
    with torch._dynamo.config.patch(enable_compiler_collectives=collectives), torch.compiler.config.patch(job_id=job):
        assert ("CC809" in codes(write_contract)) is expected
