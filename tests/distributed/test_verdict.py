"""One startup verdict for all the ranks of a real job (gloo on CPU, plain processes as srun starts them, and
torchrun): a refusal anywhere refuses everywhere with the same report, a rank that never reports is named, and the
ranks agree on what they compile. Every job has its own timeout and cannot hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.distributed.launch import RankRun, rank_lines, run_plain, run_torchrun

JOB_TIMEOUT_S = 120
EXCHANGE_TIMEOUT_S = 5

pytestmark = pytest.mark.timeout(JOB_TIMEOUT_S + 60)


def contract_file(tmp_path: Path, name: str = "c.toml", extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(
        f'[contract]\nname = "job"\n\n[[region]]\nname = "layers"\nmodule = "layers.*"\nbackend = "eager"\n{extra}\n'
        f"[distributed]\ntimeout_s = {EXCHANGE_TIMEOUT_S}\n"
    )
    return path


def enforce_job(tmp_path: Path, world: int, env_for=None, path: Path | None = None) -> list[RankRun]:
    argv = ["-m", "tests.distributed.worker", "enforce", str(path or contract_file(tmp_path))]
    return run_plain(argv, world, timeout=JOB_TIMEOUT_S, env_for=env_for)


def report(run: RankRun) -> str:
    """The findings of the refusal report a rank printed (its lines after the header, which names its own file)."""
    out = run.stdout
    lines = out[out.index("REFUSED") :].splitlines()[2:] if "REFUSED" in out else out.splitlines()
    return "\n".join(lines)


@pytest.mark.parametrize("world", [2, 4])
def test_a_hazard_on_one_rank_refuses_every_rank_with_the_same_report_naming_that_rank(tmp_path, world):
    runs = enforce_job(tmp_path, world, env_for=lambda r: {"HAZARD": "1"} if r == 1 else {})
    assert all(r.returncode == 1 for r in runs), [(r.returncode, r.stdout[-300:], r.stderr[-600:]) for r in runs]
    reports = {report(r) for r in runs}
    assert len(reports) == 1, reports
    (text,) = reports
    assert "rank 1: contract/demo.py:64: CC301" in text and "contract check failed" in runs[0].stdout


def test_a_clean_job_starts_on_every_rank(tmp_path):
    runs = enforce_job(tmp_path, 2)
    assert [r.returncode for r in runs] == [0, 0] and all("STARTED" in r.stdout for r in runs), runs


def test_a_rank_that_dies_before_the_exchange_is_named_and_every_other_rank_exits_in_bounded_time(tmp_path):
    runs = enforce_job(tmp_path, 4, env_for=lambda r: {"DIE_BEFORE_ENFORCE": "1"} if r == 2 else {})
    assert runs[2].returncode == 3
    others = [r for r in runs if r.rank != 2]
    assert all(r.returncode == 1 for r in others), [(r.returncode, r.stdout[-400:], r.stderr[-400:]) for r in others]
    assert all("rank 2: ranks: CC801 rank 2 did not report within 5 s" in r.stdout for r in others)
    # from the start of enforce to the exit: the checks, the exchange's bound, the exit (slack for a loaded machine)
    assert max(r.ended_at - (r.printed_time("ENFORCE_AT") or 0) for r in others) < 2 * EXCHANGE_TIMEOUT_S + 30


def test_ranks_with_different_contracts_are_refused_naming_the_ranks_and_values(tmp_path):
    other = contract_file(tmp_path, "other.toml", extra="recompile_budget = 3\n")
    runs = enforce_job(tmp_path, 2, env_for=lambda r: {"CONTRACT": str(other)} if r == 1 else {})
    assert all(r.returncode == 1 for r in runs), runs
    text = report(runs[0])
    assert report(runs[1]) == text
    assert "CC802" in text and "CC803" in text and "recompile_budget=3" in text and "rank 1: region.layers" in text


def test_a_compile_variable_on_one_rank_is_refused_and_a_declared_per_rank_one_is_not(tmp_path):
    runs = enforce_job(tmp_path, 2, env_for=lambda r: {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"} if r == 1 else {})
    assert all(r.returncode == 1 for r in runs), runs
    text = report(runs[0])
    assert "rank 1: env.TORCHINDUCTOR_MAX_AUTOTUNE: CC806" in text and "rank 1 have 1" in text
    per_rank = contract_file(tmp_path, "per_rank.toml", extra="")
    per_rank.write_text(per_rank.read_text() + 'per_rank = ["cache.dir"]\n')
    runs = enforce_job(
        tmp_path, 2, env_for=lambda r: {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / f"cache{r}")}, path=per_rank
    )
    assert [r.returncode for r in runs] == [0, 0], [(r.stdout[-500:], r.stderr[-500:]) for r in runs]


def test_under_torchrun_a_refusal_on_one_rank_ends_the_job_with_both_ranks_printing_it(tmp_path):
    path = contract_file(tmp_path)
    rc, out, err = run_torchrun(
        ["-m", "tests.distributed.worker", "enforce", str(path)],
        2,
        timeout=JOB_TIMEOUT_S,
        env={"HAZARD": "1"},
    )
    assert rc == 1, (out[-800:], err[-800:])
    for rank in (0, 1):
        assert "CC301" in rank_lines(out, rank) and "REFUSED" in rank_lines(out, rank), rank_lines(out, rank)[-500:]


def test_pipeline_stages_with_their_own_contracts_agree_within_their_stage_group(tmp_path):
    contract_file(tmp_path, "c-stage0.toml")
    contract_file(tmp_path, "c-stage1.toml", extra="recompile_budget = 2\n")
    runs = run_plain(["-m", "tests.distributed.worker", "stages", str(tmp_path / "c.toml")], 4, timeout=JOB_TIMEOUT_S)
    assert [r.returncode for r in runs] == [0, 0, 0, 0], [(r.stdout[-500:], r.stderr[-800:]) for r in runs]
