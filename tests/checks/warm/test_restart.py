"""Warm starts with real caches: `compile-contract warm` once, then real engine restarts against the same cache
directory, one change at a time; the startup prediction and the runtime `cold_compile` event must name the change."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RedisServer

HERE = Path(__file__).parent
CLI = str(Path(sys.executable).parent / "compile-contract")
JOB = {"TORCH_COMPILE_JOB_ID": "warm-test"}
CLEAN = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_", "TORCHDYNAMO_"))},
    **JOB,
}
CONTRACT = """\
[contract]
name = "warm-test"
model = "warm_model:build"
step = "warm_model:step"

[[region]]
name = "block"
module = "block"

[cache]
dir = "{dir}"
fx_graph_cache = true
autograd_cache = true
min_free_gib = 0.01
manifest = "warm.json"
{extra}

[probe]
enabled = false
"""

pytestmark = pytest.mark.slow


def write_contract(site: Path, *, dir: str = "cache", extra: str = 'artifacts = "warm.bin"') -> Path:
    path = site / "contract.toml"
    path.write_text(CONTRACT.format(dir=dir, extra=extra))
    return path


def run(args: list[str], site: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A real process in the site's directory, with TORCHINDUCTOR_CACHE_DIR exported as the contract's dir."""
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(site / _cache_dir(site))}
    return subprocess.run(
        args, cwd=site, env={**CLEAN, **cache, **(env or {})}, capture_output=True, text=True, timeout=400, check=False
    )


def _cache_dir(site: Path) -> str:
    text = (site / "contract.toml").read_text()
    return text.split('dir = "', 1)[1].split('"', 1)[0]


def engine(site: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One real engine start (check, enforce, two monitored steps) in the site's directory."""
    res = run([sys.executable, str(HERE / "engine.py"), "contract.toml", *args], site, env)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def doctor(site: Path, env: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]]]:
    res = run([CLI, "doctor", "contract.toml", "--format", "json"], site, env)
    assert res.returncode in (0, 1), res.stderr
    return res.returncode, json.loads(res.stdout)["findings"]


def warm_codes(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f["code"], f["location"]) for f in findings if f["code"].startswith("CC7")]


def cold_events(out: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in out["events"] if e["event"] == "cold_compile"]


def fx(out: dict[str, Any]) -> dict[str, int]:
    return out["snapshot"]["block"]["cache"]["fx_graph"]


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer | None]:
    """A real Redis for the remote cache, shared by the module (the warm run fills it once); None without one."""
    if shutil.which("redis-server") is None:
        yield None
        return
    server = RedisServer()
    yield server
    server.stop()


def remote(redis: RedisServer | None) -> dict[str, str]:
    """Torch's remote FX-graph cache on that Redis. Not the remote AOTAutograd cache: functorch's
    `enable_remote_autograd_cache` is part of every AOTAutograd key (`save_config()`), so the restarts without it
    would miss (CC703 says so: `functorch_config[enable_remote_autograd_cache]`)."""
    if redis is None:
        return {}
    return {"TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_REDIS_URL": redis.url}


@pytest.fixture(scope="module")
def warmed(tmp_path_factory, redis: RedisServer | None) -> Path:
    """A directory where `compile-contract warm` filled the local cache (and the remote one), and wrote the manifest
    and the artifacts."""
    site = tmp_path_factory.mktemp("warmed")
    shutil.copy(HERE / "warm_model.py", site)
    write_contract(site)
    res = run([CLI, "warm", "contract.toml", "--no-precompile"], site, remote(redis))
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    assert res.stdout.startswith(f"warm manifest written: {site / 'warm.json'} (1 region compiled, 1 compile")
    digest = hashlib.sha256((site / "warm.bin").read_bytes()).hexdigest()
    assert f'artifacts sha256: {digest}\npin it: add artifacts_sha256 = "{digest}" to [cache]' in res.stdout
    return site


@pytest.fixture
def site(warmed: Path, tmp_path: Path) -> Path:
    """A private copy of the warmed directory (the cache dir moves with it: keys do not depend on where it is)."""
    return Path(shutil.copytree(warmed, tmp_path / "site"))


def test_the_manifest_records_the_compile_its_keys_the_environment_and_the_pgo_state(warmed: Path) -> None:
    data = json.loads((warmed / "warm.json").read_text())
    (record,) = data["regions"]["block"]["instances"]["block.forward"]
    caches = [(lk["cache"], lk["state"]) for lk in record["lookups"]]
    assert caches == [("aot_autograd", "miss"), ("fx_graph", "miss")] and record["seconds"] > 0
    assert data["environment"]["torch"] == metadata.version("torch")
    assert "max_autotune" in data["environment"]["config"]["inductor"]
    assert data["pgo"]["job_id"] == "warm-test" and data["pgo"]["present"]
    assert "inductor_config[max_autotune]" in data["components"]["fx_graph"]
    assert data["artifacts"]["keys"]["inductor"] == [lk["key"] for lk in record["lookups"] if lk["cache"] == "fx_graph"]


def test_an_unchanged_restart_is_predicted_warm_and_every_lookup_hits(site: Path) -> None:
    assert warm_codes(doctor(site)[1]) == []
    out = engine(site)
    assert warm_codes(out["findings"]) == [] and "violation" not in out
    assert fx(out) == {"hit": 1, "miss": 0} and cold_events(out) == []


def test_an_inductor_option_set_in_code_is_named_by_the_check_and_by_the_cold_compile(site: Path) -> None:
    out = engine(site, "--inductor", "scalar_asserts=false")
    assert warm_codes(out["findings"]) == [("CC703", "inductor_config[scalar_asserts]")]
    (event,) = cold_events(out)
    assert event["cause"] == "key_changed" and event["instance"] == "block.forward"
    assert event["changed"] == ["inductor_config[scalar_asserts] True -> False"]


def test_an_environment_variable_is_named_by_doctor_the_check_and_the_cold_compile(site: Path) -> None:
    env = {"TORCHINDUCTOR_SIZE_ASSERTS": "0"}
    rc, findings = doctor(site, env)
    assert rc == 0 and warm_codes(findings) == [("CC703", "TORCHINDUCTOR_SIZE_ASSERTS")]
    assert "TORCHINDUCTOR_SIZE_ASSERTS unset -> 0 may change the cache keys" in findings[0]["message"]
    out = engine(site, env=env)
    assert warm_codes(out["findings"]) == [("CC703", "inductor_config[size_asserts]")]
    assert "changes every FX-graph key: expect about" in out["findings"][0]["message"]
    (event,) = cold_events(out)
    assert event["changed"] == ["inductor_config[size_asserts] True -> False"]


def test_a_changed_region_source_is_named_by_the_check_and_the_cold_compile_shows_a_new_graph(site: Path) -> None:
    model = site / "warm_model.py"
    model.write_text(model.read_text().replace("* 2", "* 3"))
    out = engine(site)
    assert warm_codes(out["findings"]) == [("CC704", "region[0]")]
    assert "its code differ" in out["findings"][0]["message"]
    (event,) = cold_events(out)
    assert [c.split(" ")[0] for c in event["changed"]] == ["gm"]


def test_the_torch_version_recorded_in_the_manifest_is_compared_by_doctor_and_check(site: Path, monkeypatch) -> None:
    manifest = site / "warm.json"
    data = json.loads(manifest.read_text())
    data["environment"]["torch"] = "2.10.0"  # a torch no environment of the matrix has
    manifest.write_text(json.dumps(data))
    rc, findings = doctor(site)
    now = metadata.version("torch")
    assert rc == 0 and warm_codes(findings) == [("CC703", "torch")]
    assert findings[0]["message"].startswith(f"torch 2.10.0 -> {now} changes every FX-graph key: expect about")
    write_contract(site, extra='artifacts = "warm.bin"\nrequire_warm = true')
    rc, findings = doctor(site)
    assert rc == 1 and [(f["code"], f["severity"]) for f in findings] == [("CC703", "error")]
    monkeypatch.syspath_prepend(str(site))
    from warm_model import build  # type: ignore[import-not-found]

    from contract.pipeline import check

    _, _, found = check(site / "contract.toml", build())  # in this process: other cache dir, no PGO job id
    assert [(f.location, f.severity) for f in found if f.code == "CC703"] == [("torch", "error")]


def test_an_empty_cache_dir_is_predicted_cold_and_the_cold_compile_says_the_entry_is_missing(site: Path) -> None:
    write_contract(site, dir="empty", extra="")
    out = engine(site)
    codes = warm_codes(out["findings"])
    assert codes == [
        ("CC705", str(site / "empty")),
        ("CC706", str(site / "empty/dynamo/code_state_warm-test_None_.pkl")),
    ]
    assert "1 of 1 recorded compiles find no cache entry" in out["findings"][0]["message"]
    (event,) = cold_events(out)
    assert event["cause"] == "entry_missing" and event["changed"] == []


def test_portable_artifacts_warm_a_process_whose_local_cache_is_empty(site: Path) -> None:
    write_contract(site, dir="empty", extra='artifacts = "warm.bin"\nrequire_warm = true')
    out = engine(site)
    assert "violation" not in out and warm_codes(out["findings"]) == []
    assert fx(out) == {"hit": 1, "miss": 0} and cold_events(out) == []


def test_without_the_pgo_job_id_or_its_state_file_the_restart_is_predicted_to_compile_twice(site: Path) -> None:
    res = run([CLI, "doctor", "contract.toml", "--format", "json"], site, {"TORCH_COMPILE_JOB_ID": ""})
    findings = json.loads(res.stdout)["findings"]
    assert warm_codes(findings) == [("CC706", "TORCH_COMPILE_JOB_ID")]
    assert "PGO job id warm-test -> unset" in findings[0]["message"]
    state = site / "cache" / "dynamo" / "code_state_warm-test_None_.pkl"
    state.unlink()
    write_contract(site, extra="")
    assert warm_codes(doctor(site)[1]) == [("CC706", str(state))]


def test_artifacts_that_cannot_be_loaded_are_reported_and_never_handed_to_torch(site: Path) -> None:
    from contract.checks.warm import artifacts
    from contract.document.load import load

    (site / "warm.bin").write_bytes(b"not torch cache artifacts")
    contract, _ = load(write_contract(site))
    assert artifacts.load(contract) == []  # checked in pure Python first: torch never sees it
    rc, findings = doctor(site)
    assert rc == 0 and warm_codes(findings) == [("CC707", "cache.artifacts")]
    assert "checksum does not match" in findings[0]["message"]


def test_a_remote_cache_warms_a_process_whose_local_cache_is_empty(site: Path, redis: RedisServer | None) -> None:
    if redis is None:
        pytest.skip("redis-server is not installed (Debian package redis-server)")
    write_contract(site, dir="empty", extra=f'remote = "{redis.url}"')
    out = engine(site, env=remote(redis))
    assert [c for c, _ in warm_codes(out["findings"])] == ["CC706"]  # PGO state is local; the graphs are remote
    assert fx(out) == {"hit": 1, "miss": 0} and cold_events(out) == []
