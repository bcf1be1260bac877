"""The warm manifest and the monitor's event files are data, never code: files crafted with pickle and Python
payloads are read through the real CLI and rejected (or shown) as data, and nothing in them ever runs."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

from tests import ROOT
from tests.checks.cache.artifacts_kit import Plant

CLI = str(Path(sys.executable).parent / "compile-contract")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}
READERS = (
    "compile_formats/manifest.py",
    "monitor/coldstart.py",
    "monitor/report/read.py",
    "contract/checks/warm/check.py",
    "contract/checks/warm/kernels.py",
)
"""The modules that read manifests and event files."""


def python(marker: Path) -> str:
    """Python source that would create `marker` if anything evaluated it."""
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


def doctor(contract: Path) -> tuple[int, list[dict]]:
    res = subprocess.run(
        [CLI, "doctor", str(contract), "--format", "json"],
        cwd=contract.parent,
        env={**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(contract.parent / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode in (0, 1) and res.stderr == "", res.stderr
    return res.returncode, json.loads(res.stdout)["findings"]


def with_manifest(tmp_path: Path, data: bytes) -> Path:
    (tmp_path / "warm.json").write_bytes(data)
    contract = tmp_path / "contract.toml"
    contract.write_text('[contract]\nname = "c"\n\n[cache]\nmanifest = "warm.json"\nmin_free_gib = 0.01\n')
    return contract


def test_a_pickled_manifest_is_rejected_as_not_json_and_never_unpickled(tmp_path) -> None:
    marker = tmp_path / "ran"
    for protocol in (0, pickle.HIGHEST_PROTOCOL):  # 0: a text pickle, the closest to JSON
        _, findings = doctor(with_manifest(tmp_path, pickle.dumps(Plant(str(marker)), protocol=protocol)))
        assert [(f["code"], f["location"]) for f in findings] == [("CC701", "cache.manifest")]
        assert "not JSON" in findings[0]["message"] and not marker.exists()


def test_python_in_a_json_manifest_stays_a_string(tmp_path) -> None:
    marker = tmp_path / "ran"
    code = python(marker)
    manifest = {
        "version": 1,
        "environment": {"torch": code, "python": {"py/object": "os.system", "__reduce__": code}},
        "regions": {code: {"instances": {code: [{"compile_id": code, "seconds": code, "lookups": []}]}}},
        "pgo": {"job_id": code, "present": True, "state_file": code},
        "artifacts": {"keys": {"inductor": [code]}},
    }
    _, findings = doctor(with_manifest(tmp_path, json.dumps(manifest).encode()))
    torch_change = [f for f in findings if f["code"] == "CC703" and f["location"] == "torch"]
    assert torch_change and torch_change[0]["message"].startswith(f"torch {code[:60]}")
    assert not marker.exists()


def test_event_files_with_pickles_and_python_are_read_as_data(tmp_path) -> None:
    marker = tmp_path / "ran"
    code = python(marker)
    events = tmp_path / "events-0.jsonl"
    lines = [
        pickle.dumps(Plant(str(marker)), protocol=0).decode("latin-1").replace("\n", " "),
        json.dumps(
            {"event": "compile", "v": 1, "rank": 0, "region": code + "<script>alert(1)</script>", "seconds": 1.0}
        ),
        json.dumps({"event": code, "v": 1, "region": code}),
    ]
    events.write_text("\n".join(lines) + "\n")
    with (tmp_path / "events-1.jsonl").open("wb") as fh:
        pickle.dump(Plant(str(marker)), fh)
    res = subprocess.run(
        [CLI, "report", str(events), str(tmp_path / "events-1.jsonl"), "-o", str(tmp_path / "out")],
        cwd=ROOT,
        env=CLEAN,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("report: 1 events from 2 file(s)") and "note:" in res.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert "&lt;script&gt;alert(1)" in html and "<script" not in html and not marker.exists()


def test_the_readers_of_manifests_and_events_never_deserialize_or_evaluate_code() -> None:
    banned_modules = {"pickle", "marshal", "shelve", "dill", "cloudpickle", "yaml", "jsonpickle", "_pickle"}
    banned_calls = {"eval", "exec", "compile", "__import__"}
    for rel in READERS:
        tree = ast.parse((ROOT / rel).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & banned_modules, rel
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] not in banned_modules, rel
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in banned_calls, f"{rel}:{node.lineno} calls {node.func.id}"
