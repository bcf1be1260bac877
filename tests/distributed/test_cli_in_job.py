"""`compile-contract check` and `doctor` run by every rank of a job reach the same one verdict as `enforce`."""

from __future__ import annotations

import pytest

from tests.distributed.launch import rank_lines, run_plain, run_torchrun
from tests.distributed.test_verdict import JOB_TIMEOUT_S, contract_file

pytestmark = pytest.mark.timeout(JOB_TIMEOUT_S + 60)


def test_check_under_torchrun_refuses_on_every_rank_with_the_refusing_ranks_findings(tmp_path):
    path = contract_file(tmp_path)
    argv = ["-m", "contract.cli", "check", str(path), "--model", "tests.distributed.worker:build_from_env"]
    rc, out, err = run_torchrun(argv, 2, timeout=JOB_TIMEOUT_S, env={"HAZARD_RANK": "1"})
    assert rc == 1, (out[-1000:], err[-1000:])
    reports = [rank_lines(out, r) for r in (0, 1)]
    assert all("rank 1: contract/demo.py:64: CC301" in text for text in reports), reports
    assert reports[0] == reports[1]


def test_doctor_run_by_every_rank_refuses_on_all_of_them_for_one_ranks_relative_cache_dir(tmp_path):
    path = contract_file(tmp_path)
    runs = run_plain(
        ["-m", "contract.cli", "doctor", str(path), "--format", "json"],
        2,
        timeout=JOB_TIMEOUT_S,
        env_for=lambda r: {"TORCHINDUCTOR_CACHE_DIR": "relative/cache"} if r == 1 else {},
    )
    assert [r.returncode for r in runs] == [1, 1], [(r.stdout[-600:], r.stderr[-600:]) for r in runs]
    import json

    verdicts = [json.loads(r.stdout) for r in runs]
    assert verdicts[0]["findings"] == verdicts[1]["findings"]
    assert any(f["code"] == "CC202" and f["ranks"] == "1" for f in verdicts[0]["findings"]), verdicts[0]
