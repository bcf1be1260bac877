"""`compile-contract doctor`, the sample launcher, and refusal through the real CLI in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

CLI = str(Path(sys.executable).parent / "compile-contract")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}


def cli(*args: str, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CLI, *args], cwd=ROOT, env={**CLEAN, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )


def json_codes(proc: subprocess.CompletedProcess) -> set[str]:
    return {f["code"] for f in json.loads(proc.stdout)["findings"]}


def test_doctor_passes_the_demo_contract_without_importing_torch() -> None:
    code = (
        "import sys; from contract.cli import main; rc = main(['doctor', 'contracts/demo.toml']); "
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules), 'torch imported'; sys.exit(rc)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=CLEAN, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout == "doctor passed: contracts/demo.toml\n"


def test_doctor_without_a_contract_checks_torchs_default_cache() -> None:
    res = cli("doctor")
    assert res.returncode == 0 and res.stdout == "doctor passed: (no contract: torch defaults)\n"


def test_doctor_json_without_a_contract_has_a_null_contract() -> None:
    res = cli("doctor", "--format", "json")
    assert res.returncode == 0 and json.loads(res.stdout) == {"ok": True, "contract": None, "findings": []}


def test_doctor_text_output_names_doctor_when_it_fails() -> None:
    res = cli("doctor", "contracts/demo.toml", env={"TORCHINDUCTOR_CACHE_DIR": "rel/inductor"})
    assert res.returncode == 1
    assert res.stdout.startswith("doctor failed: 1 finding in contracts/demo.toml (1 error, 0 warnings)\n")


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}, [("CC208", "TORCHINDUCTOR_FX_GRAPH_CACHE")]),
        ({"TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}, [("CC208", "TORCHINDUCTOR_AUTOGRAD_CACHE")]),
        ({"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}, [("CC208", "TORCHINDUCTOR_FORCE_DISABLE_CACHES")] * 2),
    ],
    ids=["fx-graph-cache-off", "autograd-cache-off", "force-disable-caches"],
)
def test_the_demo_contract_fails_when_a_cache_it_requires_is_turned_off(env, expected) -> None:
    res = cli("doctor", "contracts/demo.toml", "--format", "json", env=env)
    assert res.returncode == 1
    assert [(f["code"], f["location"]) for f in json.loads(res.stdout)["findings"]] == expected


def test_the_demo_contract_fails_when_a_file_stands_where_the_cache_dir_should_be(tmp_path) -> None:
    (tmp_path / "file").write_text("x")
    res = cli(
        "doctor",
        "contracts/demo.toml",
        "--format",
        "json",
        env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "file" / "inductor")},
    )
    assert res.returncode == 1 and json_codes(res) == {"CC203"}


@pytest.mark.parametrize(
    "options, code",
    [("size=1m,ro", "CC203"), ("size=1m", "CC206"), ("size=1g,noexec", "CC205")],
    ids=["read-only", "full", "noexec"],
)
def test_the_demo_contract_fails_on_a_broken_cache_filesystem(options, code, tmpfs) -> None:
    mnt = tmpfs(options)
    res = cli("doctor", "contracts/demo.toml", "--format", "json", env={"TORCHINDUCTOR_CACHE_DIR": str(mnt / "ind")})
    assert res.returncode == 1 and json_codes(res) == {code}


def test_doctor_fails_with_the_code_location_and_fix_of_a_broken_cache() -> None:
    res = cli("doctor", "contracts/demo.toml", "--format", "json", env={"TORCHINDUCTOR_CACHE_DIR": "rel/inductor"})
    assert res.returncode == 1
    [f] = json.loads(res.stdout)["findings"]
    assert (f["code"], f["location"]) == ("CC202", "TORCHINDUCTOR_CACHE_DIR")
    assert f["fix"] == f"export TORCHINDUCTOR_CACHE_DIR={ROOT / 'rel/inductor'} before python starts"


def test_doctor_predicts_a_required_cache_disabled_by_the_environment(write_contract) -> None:
    path = write_contract('[contract]\nname = "c"\n[cache]\nfx_graph_cache = true\nautograd_cache = true\n')
    res = cli("doctor", str(path), "--format", "json", env={"TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})
    assert res.returncode == 1
    assert [(f["code"], f["location"]) for f in json.loads(res.stdout)["findings"]] == [
        ("CC208", "TORCHINDUCTOR_AUTOGRAD_CACHE")
    ]


def test_doctor_on_a_missing_contract_is_a_usage_error_in_one_line() -> None:
    res = cli("doctor", "contracts/nope.toml")
    assert res.returncode == 2 and res.stdout == "" and len(res.stderr.strip().splitlines()) == 1
    assert "no such contract file" in res.stderr


def test_warnings_pass_and_strict_refuses_them(write_contract, start_redis) -> None:
    server = start_redis("--requirepass", "secret")
    path = write_contract(f'[contract]\nname = "c"\n[cache]\nremote = "{server.url}"\n')
    relaxed = cli("doctor", str(path), "--format", "json")
    assert relaxed.returncode == 0 and json_codes(relaxed) == {"CC210"}
    strict = cli("doctor", str(path), "--strict")
    assert strict.returncode == 1 and "CC210" in strict.stdout


def test_doctor_reports_a_redis_that_is_down_with_host_and_port(write_contract, start_redis) -> None:
    server = start_redis()
    server.stop()
    res = cli("doctor", str(write_contract(f'[contract]\nname = "c"\n[cache]\nremote = "{server.url}"\n')))
    assert res.returncode == 1 and f"Redis at 127.0.0.1:{server.port} does not answer" in res.stdout


def test_allow_entries_for_checks_doctor_does_not_run_are_not_reported_unused(write_contract, tmp_path) -> None:
    path = write_contract(
        f'[contract]\nname = "c"\n[cache]\nmin_free_gib = 1000000.0\n'
        f'[[allow]]\ncode = "CC504"\nwhere = "region[*]"\nreason = "outer region is eager"\n'
        f'[[allow]]\ncode = "CC206"\nwhere = "{tmp_path}/*"\nreason = "small scratch job"\n'
    )
    res = cli("doctor", str(path), "--format", "json", env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")})
    assert res.returncode == 0 and json_codes(res) == set()


def test_check_of_the_demo_fails_with_the_right_code_on_an_insecure_cache(tmp_path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    res = cli(
        "check", "contracts/demo.toml", "--format", "json", env={"TORCHINDUCTOR_CACHE_DIR": str(open_dir / "ind")}
    )
    assert res.returncode == 1 and json_codes(res) == {"CC207"}


def test_launcher_refuses_to_start_the_job_when_doctor_fails(tmp_path) -> None:
    marker = tmp_path / "started"
    res = subprocess.run(
        ["ops/launch.sh", "contracts/demo.toml", "--", "touch", str(marker)],
        cwd=ROOT,
        env={**CLEAN, "COMPILE_CONTRACT": CLI, "TORCHINDUCTOR_CACHE_DIR": "rel/inductor"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 1 and not marker.exists()
    assert "launch refused: compile-contract doctor failed" in res.stderr and "CC202" in res.stdout


def test_launcher_runs_doctor_then_check_then_the_job_on_a_healthy_setup(tmp_path) -> None:
    marker = tmp_path / "started"
    res = subprocess.run(
        ["ops/launch.sh", "contracts/demo.toml", "--", "touch", str(marker)],
        cwd=ROOT,
        env={**CLEAN, "COMPILE_CONTRACT": CLI},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert marker.exists()
    assert res.stdout.index("doctor passed") < res.stdout.index("contract check passed")
