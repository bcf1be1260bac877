"""`compile-contract upgrade` between the suite's torch 2.13 and the cached torch 2.15 environment, both ways: the five
corpus cases whose behaviour differs (one region each), the demo (inductor), a Hugging Face decoder, and a step the
candidate breaks. Skipped, with the command that builds it, where the 2.15 environment is absent (CI builds it with
`scripts/torch-env.sh 2.15.0` before the tests; a test never triggers that 3 GB download)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from contract.upgrade.command import Options, upgrade
from contract.upgrade.compare import Report
from contract.upgrade.export import render_json
from tests import ROOT
from tests.upgrade.models import DIFFERING, contract, region

CANDIDATE = "2.15.0"
COUNTERS = ("h04", "h05", "h54", "h58")
"""The four counter cases: 8 compiles in 8 steps on torch 2.13, 1 on 2.15 (h24 breaks the graph on 2.13 instead)."""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def random_site() -> str:
    """`corpus/h24_random.py:N`, the line of forward calling `random.random()` (found: the file may gain lines)."""
    path = ROOT / "tests" / "checks" / "hotpath" / "corpus" / "h24_random.py"
    lines = enumerate(path.read_text().splitlines(), 1)
    line = next(i for i, text in lines if text.strip().startswith("return") and "random.random()" in text)
    return f"corpus/h24_random.py:{line}"


def cached_python(version: str) -> Path | None:
    """The python `bash scripts/torch-env.sh VERSION` prints, found as the script finds it (its cache dir, the lock's
    digest, the `.complete` mark) without running it: on a miss the script would download torch."""
    lock = ROOT / "requirements" / f"torch-{version}.lock"
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    cache = Path(os.environ.get("TORCH_ENV_CACHE") or Path(home) / "torch-compile-contract" / "envs")
    env = cache / f"torch-{version}-{hashlib.sha256(lock.read_bytes()).hexdigest()[:12]}"
    python = env / "bin" / "python"
    return python if (env / ".complete").is_file() and python.exists() else None


@pytest.fixture(scope="module")
def candidate() -> str:
    python = cached_python(CANDIDATE)
    if python is None:
        pytest.skip(f"no torch {CANDIDATE} environment: build it with `bash scripts/torch-env.sh {CANDIDATE}`")
    if torch.__version__.startswith("2.15"):
        pytest.skip("the suite runs on torch 2.15 itself: nothing to compare with the 2.15 environment")
    return str(python)


@pytest.fixture(scope="module")
def caller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The caller's environment: this checkout first on the path (the cached env's editable install may point at
    another checkout), the repo root as working directory, a private Inductor cache."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path_factory.mktemp("inductor"))}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        for key in ("PYTHONPATH", "TORCHINDUCTOR_CACHE_DIR"):
            mp.setenv(key, env[key])
        yield env


@pytest.fixture(scope="module")
def differing(tmp_path_factory: pytest.TempPathFactory, caller: dict[str, str]) -> Path:
    """The five cases' contract with a warm manifest written under torch 2.13 (`compile-contract warm`)."""
    path = tmp_path_factory.mktemp("differing") / "differing.toml"
    path.write_text(contract(manifest=True))
    warm = cli(sys.executable, "warm", str(path), env=caller)
    assert warm.returncode == 0, warm.stderr[-3000:]
    return path


def cli(python: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "contract.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=840
    )


@pytest.fixture(scope="module")
def forward(differing: Path, candidate: str) -> Report:
    """2.13 -> 2.15 on the five cases, in-process (the workers are subprocesses)."""
    return upgrade(Options(contract=differing, candidate=candidate))


def regions(report: Report) -> dict[str, Any]:
    return {rc.name: rc for rc in report.regions}


def test_forward_the_counters_stop_recompiling_and_the_upgrade_passes(forward: Report) -> None:
    assert forward.current.torch.startswith("2.13") and forward.candidate.torch.startswith("2.15")
    assert forward.exit_code == 0, forward.reasons
    by = regions(forward)
    assert set(by) == {region(c) for c in DIFFERING}
    for name in COUNTERS:
        rc = by[name]
        assert rc.current and rc.candidate, name
        assert (rc.current.compiles, rc.current.recompiles, rc.candidate.compiles, rc.candidate.recompiles) == (
            8,
            7,
            1,
            0,
        )
        assert [g.count for g in rc.recompiles_removed] == [7] and rc.recompiles_added == ()
        assert [f.code for f in rc.findings_removed] == ["CC401"]
        assert [(a.severity, b.severity) for a, b in rc.findings_changed] == [("error", "warning")]
        assert (rc.seconds_ratio or 1.0) < 1.0 and rc.candidate.guard_count < rc.current.guard_count


def test_forward_the_random_case_loses_its_graph_break(forward: Report) -> None:
    rc = regions(forward)["h24"]
    assert rc.current.graph_breaks == 1 and rc.candidate.graph_breaks == 0
    (gone,) = rc.breaks_removed
    assert gone.site.endswith(random_site()) and rc.breaks_added == ()
    assert "CC403" in [f.code for f in rc.findings_removed]


def test_forward_the_manifest_predicts_a_warm_start_now_and_a_cold_one_on_the_candidate(forward: Report) -> None:
    for rc in forward.regions:
        now, then = rc.cold_start
        assert now is not None and not now.cold, rc.name
        assert then is not None and then.cold and "CC703" in then.why and (then.seconds or 0) > 0, rc.name
    assert {f.code for f in forward.findings_added} == {"CC703"}
    assert all(f.severity == "warning" for f in forward.findings_added)


def test_forward_outputs_do_not_drift_and_the_json_has_the_documented_fields(forward: Report) -> None:
    assert forward.drift.compared == 8 * len(DIFFERING) and forward.drift.max_abs == 0
    data = json.loads(render_json(forward))
    assert data["current"]["torch"].startswith("2.13") and data["candidate"]["torch"].startswith("2.15")
    h04 = next(r for r in data["regions"] if r["name"] == "h04")
    assert {k: h04["current"][k] for k in ("compiles", "recompiles", "graph_breaks")} == {
        "compiles": 8,
        "recompiles": 7,
        "graph_breaks": 0,
    }
    assert h04["candidate"]["compiles"] == 1 and h04["candidate"]["compile_seconds"] > 0
    assert {f["code"] for f in data["findings_removed"]} >= {"CC401", "CC403"}


def test_backward_the_counters_recompile_again_and_the_upgrade_fails(
    differing: Path, candidate: str, caller: dict[str, str]
) -> None:
    """2.15 -> 2.13: the command run by the 2.15 interpreter, the suite's python as candidate."""
    proc = cli(candidate, "upgrade", str(differing), "--candidate", sys.executable, "--format", "json", env=caller)
    assert proc.returncode == 1, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    by = {r["name"]: r for r in data["regions"]}
    for name in COUNTERS:
        assert by[name]["candidate"]["recompiles"] == 7 and by[name]["over_budget"], name
    assert [b["site"].endswith(random_site()) for b in by["h24"]["graph_breaks_added"]] == [True]
    assert {f["code"] for f in data["findings_added"] if f["severity"] == "error"} >= {"CC401", "CC403"}
    assert by["h04"]["current"]["cold_start"]["cold"] and not by["h04"]["candidate"]["cold_start"]["cold"]
    assert any("recompile_budget 0" in r for r in data["reasons"])


def test_a_step_the_candidate_breaks_fails_the_upgrade(tmp_path: Path, candidate: str, caller: dict[str, str]) -> None:
    path = tmp_path / "breaks.toml"
    path.write_text(contract(step_ref="tests.upgrade.models:step_fails_on_2_15"))
    report = upgrade(Options(contract=path, candidate=candidate, steps=2))
    assert report.exit_code == 1 and report.candidate.record_error
    assert "this step does not run on torch 2.15" in report.reasons[-1]


def test_the_demo_compiles_alike_with_inductor_on_both_torches(candidate: str, caller: dict[str, str]) -> None:
    report = upgrade(Options(contract=ROOT / "contracts" / "demo.toml", candidate=candidate))
    assert report.exit_code == 0, report.reasons
    by = regions(report)
    assert set(by) == {"layers", "lm_head"}
    for rc in report.regions:
        assert rc.current and rc.candidate and rc.current.compiles >= 1 and rc.candidate.compiles >= 1
        assert rc.seconds_ratio is not None and rc.candidate.guard_count
        assert rc.cold_start[1] is not None and rc.cold_start[1].cold
    assert report.drift.compared == 6 and (report.drift.max_rel or 0.0) < 1e-4


def test_a_hugging_face_decoder_per_layer(tmp_path: Path, candidate: str, caller: dict[str, str]) -> None:
    pytest.importorskip("transformers")
    path = tmp_path / "llama.toml"
    path.write_text(
        '[contract]\nname = "hf-llama"\nmodel = "tests.checks.hf_models:llama"\nstep = "tests.checks.hf_models:step"\n\n'
        '[defaults]\nbackend = "eager"\n\n[[region]]\nname = "layers"\nmodule = "model.layers.*"\n\n[probe]\nsteps = 4\n'
    )
    report = upgrade(Options(contract=path, candidate=candidate))
    assert report.exit_code == 0, report.reasons
    (rc,) = report.regions
    assert rc.current and rc.candidate and rc.current.recompiles == rc.candidate.recompiles == 0
    assert rc.current.guard_count and rc.candidate.guard_count
    assert report.drift.compared == 4 and (report.drift.max_rel or 0.0) < 1e-5
