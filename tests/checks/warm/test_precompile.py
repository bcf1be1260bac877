"""Precompiled bundles with real caches: `compile-contract warm` builds one and verifies it in a fresh process; real
engine restarts with an empty cache dir then run the saved Dynamo code, recompile unseen shapes without a crash, and
report where each instance's first compile came from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contract.checks.cache.container import types

HERE = Path(__file__).parent
CLI = str(Path(sys.executable).parent / "compile-contract")
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_", "TORCHDYNAMO_", "TORCH_CACHING_PRECOMPILE"))
}
CONTRACT = """\
[contract]
name = "precompile-test"
model = "{model}"
step = "precompile_model:step"

[[region]]
name = "block"
module = "block"

[cache]
dir = "{dir}"
fx_graph_cache = true
autograd_cache = true
min_free_gib = 0.01
manifest = "warm.json"
artifacts = "warm.bin"

[monitor]
events_path = "events.jsonl"

[probe]
enabled = false
"""

pytestmark = pytest.mark.slow


def write_contract(site: Path, *, dir: str = "cache", model: str = "precompile_model:build") -> Path:
    path = site / "contract.toml"
    path.write_text(CONTRACT.format(dir=dir, model=model))
    return path


def run(args: list[str], site: Path, dir: str) -> subprocess.CompletedProcess:
    """A real process in the site's directory, with TORCHINDUCTOR_CACHE_DIR exported as the contract's dir."""
    env = {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(site / dir)}
    return subprocess.run(args, cwd=site, env=env, capture_output=True, text=True, timeout=900, check=False)


def warm(site: Path, model: str = "precompile_model:build") -> subprocess.CompletedProcess:
    shutil.copy(HERE / "precompile_model.py", site)
    write_contract(site, model=model)
    res = run([CLI, "warm", "contract.toml"], site, "cache")
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    return res


def engine(site: Path, *args: str) -> dict[str, Any]:
    """One real engine start with an empty cache dir (enforce, two monitored steps, then `--unseen` shapes)."""
    write_contract(site, dir="empty")
    res = run([sys.executable, str(HERE / "precompile_engine.py"), "contract.toml", *args], site, "empty")
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def named(out: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [e for e in out["events"] if e["event"] == event]


def verdict(site: Path) -> dict[str, Any]:
    return json.loads((site / "warm.json").read_text())["precompile"]


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> tuple[Path, str]:
    """A directory where `compile-contract warm` built, verified and kept a precompiled bundle; warm's stdout."""
    site = tmp_path_factory.mktemp("precompiled")
    return site, warm(site).stdout


@pytest.fixture
def site(warmed: tuple[Path, str], tmp_path: Path) -> Path:
    """A private copy of the warmed directory."""
    return Path(shutil.copytree(warmed[0], tmp_path / "site"))


def test_warm_keeps_a_bundle_only_after_a_fresh_process_loaded_it_hit_and_recompiled_unseen_shapes(warmed) -> None:
    import torch

    site, stdout = warmed
    found = verdict(site)
    assert (found["verified"], found["torch"], found["reason"]) == (True, torch.__version__, None)
    assert found["regions"]["block"]["loads"] == {"hit": 1} and found["regions"]["block"]["compiled"] == 0
    assert found["unseen"]["block"]["result"] == "recompiled" and found["unseen"]["block"]["compiles"] >= 2
    assert "precompile" in types((site / "warm.bin").read_bytes())
    assert f"precompile: verified with torch {torch.__version__} in a fresh process" in stdout


def test_a_restart_with_an_empty_cache_runs_the_saved_dynamo_code_without_compiling(site: Path) -> None:
    out = engine(site)
    assert out["precompile"] is True and "crash" not in out
    (first,) = named(out, "first_compile")
    assert (first["instance"], first["source"]) == ("block.forward", "precompile") and first["seconds"] > 0
    block = out["snapshot"]["block"]
    assert block["compiles"] == 0 and block["first_compiles"] == {"precompile": 1, "artifacts": 0, "cold": 0}
    assert 'torch_compile_first_compiles_total{region="block",source="precompile"} 1.0' in out["metrics"]
    assert named(out, "cold_compile") == []


def test_shapes_the_warm_run_never_saw_recompile_after_the_load_and_never_crash(site: Path) -> None:
    out = engine(site, "--unseen", "4")
    assert "crash" not in out, out["crash"]
    block = out["snapshot"]["block"]
    assert block["compiles"] >= 4 and block["recompiles"] == block["compiles"]
    assert {e["instance"] for e in named(out, "first_compile")} == {"block.forward"}
    assert named(out, "cold_compile") == []  # the manifest's compiles were all precompiled: nothing to compare


def test_a_changed_source_file_makes_torch_refuse_the_entry_and_is_a_cold_compile_with_its_reason(site: Path) -> None:
    model = site / "precompile_model.py"
    model.write_text(model.read_text().replace("* 2", "* 3"))
    out = engine(site)
    assert out["precompile"] is True and "crash" not in out
    (cold,) = named(out, "cold_compile")
    assert (cold["cause"], cold["instance"]) == ("precompile_bypass", "block.forward")
    assert "Source code changes detected" in cold["reason"]
    (first,) = named(out, "first_compile")
    assert first["source"] in ("artifacts", "cold") and first["precompile"] == "bypass"
    assert out["snapshot"]["block"]["cold_compiles"] == 1


def test_a_verdict_made_with_another_torch_leaves_precompile_off_and_the_plain_entries_hit(site: Path) -> None:
    manifest = site / "warm.json"
    data = json.loads(manifest.read_text())
    data["precompile"]["torch"] = "2.99.0"
    manifest.write_text(json.dumps(data))
    out = engine(site)
    assert out["precompile"] is False and "crash" not in out
    (first,) = named(out, "first_compile")
    assert first["source"] == "artifacts" and "precompile" not in first


def test_a_bundle_anyone_may_rewrite_is_refused_before_torch_writes_an_entry(site: Path) -> None:
    (site / "warm.bin").chmod(0o666)
    write_contract(site, dir="empty")
    res = run([sys.executable, str(HERE / "precompile_engine.py"), "contract.toml"], site, "empty")
    assert res.returncode != 0 and "CC211" in res.stderr
    assert not (site / "empty" / "dynamo").exists()


def test_the_report_shows_where_each_first_compile_came_from(site: Path) -> None:
    engine(site)
    res = run([CLI, "report", "events.jsonl", "-o", "report"], site, "empty")
    assert res.returncode == 0, res.stderr[-2000:]
    html = (site / "report" / "report.html").read_text()
    section = html.split('<section id="starts">', 1)[1].split("</section>", 1)[0]
    assert "<td>block</td><td>precompile</td>" in section


def test_a_bundle_whose_verification_fails_is_not_kept_and_the_manifest_says_why(tmp_path: Path) -> None:
    site = tmp_path / "local"
    site.mkdir()
    stdout = warm(site, model="precompile_model:build_local").stdout
    found = verdict(site)
    assert found["verified"] is False and "Local" in found["reason"] and "local scope" in found["reason"]
    assert "precompile" not in types((site / "warm.bin").read_bytes())
    assert "precompile: not used with torch" in stdout and "plain artifacts saved" in stdout
