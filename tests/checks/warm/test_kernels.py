"""The kernel pack with real caches and real files: `compile-contract warm` on CPU packs the C++ kernels beside the
artifacts; a fresh engine start with an empty cache dir installs them and builds none; a pack with one byte changed,
one a group with other members may write, one with a member named `../x.so` or one built on another CPU is refused
with its code and nothing of it is written."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from contract.checks.warm import kernels
from contract.document.load import load
from tests.checks.warm.test_precompile import CLI, engine, named, run, warm

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> Path:
    """A directory where `compile-contract warm` wrote the artifacts, the manifest and the kernel pack."""
    site = tmp_path_factory.mktemp("kernels")
    warm(site)
    return site


@pytest.fixture
def site(warmed: Path, tmp_path: Path) -> Path:
    """A private copy of the warmed directory (its cache dir left out: every start here begins empty)."""
    return Path(shutil.copytree(warmed, tmp_path / "site", ignore=shutil.ignore_patterns("cache")))


def recorded(site: Path) -> dict[str, Any]:
    return json.loads((site / "warm.json").read_text())["kernels"]


def inspect(site: Path) -> kernels.Pack:
    """What enforce would install from the site's pack (the same inspection, in this process)."""
    contract, _ = load(site / "contract.toml")
    assert contract is not None
    return kernels.inspect(contract)


def rewrite_manifest(site: Path, data: bytes, files: dict[str, bytes]) -> None:
    """Record a pack of `files` (written as `data`) in the manifest, as a warm run would have."""
    (site / "warm.bin.kernels").write_bytes(data)
    manifest = json.loads((site / "warm.json").read_text())
    manifest["kernels"]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["kernels"]["files"] = {
        n: {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()} for n, b in files.items()
    }
    (site / "warm.json").write_text(json.dumps(manifest))


def assert_refused(pack: kernels.Pack, code: str, tmp_path: Path) -> None:
    """One finding of `code`, nothing to install, and an install writes nothing."""
    assert [f.code for f in pack.findings] == [code] and pack.files is None
    target = tmp_path / "target"
    assert kernels.install(pack, target) == (0, 0) and not target.exists()


def test_warm_packs_the_cpp_kernels_beside_the_artifacts_and_records_each_file(warmed: Path) -> None:
    import torch

    found = recorded(warmed)
    data = (warmed / "warm.bin.kernels").read_bytes()
    assert found["path"] == "warm.bin.kernels" and found["bytes"] == len(data)
    assert found["sha256"] == hashlib.sha256(data).hexdigest()
    assert any(n.endswith(".main.so") for n in found["files"])  # the graphs' kernels, beside Inductor's ISA probes
    for name, meta in found["files"].items():
        body = (warmed / "cache" / name).read_bytes()
        assert (len(body), hashlib.sha256(body).hexdigest()) == (meta["bytes"], meta["sha256"])
    assert found["host"]["torch"] == torch.__version__ and found["host"]["cpu_flags"]


def test_a_fresh_start_with_an_empty_cache_dir_installs_the_pack_and_builds_no_cpp_kernel(site: Path) -> None:
    out = engine(site)
    assert out["precompile"] is True and "crash" not in out
    (first,) = named(out, "first_compile")
    assert (first["instance"], first["source"]) == ("block.forward", "precompile")
    cache = site / "empty"
    built = {p.relative_to(cache).as_posix() for p in cache.glob("??/*.so")}
    assert built == set(recorded(site)["files"])  # a kernel Inductor compiled would be a new .so: there is none
    assert not list(cache.glob("??/*.o"))
    for name, meta in recorded(site)["files"].items():
        path = cache / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == meta["sha256"]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_pack_with_one_byte_changed_is_refused_and_nothing_is_written(site: Path, tmp_path: Path) -> None:
    pack = site / "warm.bin.kernels"
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))
    found = inspect(site)
    assert_refused(found, "CC708", tmp_path)
    assert "sha256" in found.findings[0].message and found.findings[0].location == "cache.artifacts"


def test_a_pack_a_group_with_other_members_may_write_is_refused(site: Path, tmp_path: Path, unix_group) -> None:
    pack = site / "warm.bin.kernels"
    os.chown(pack, -1, unix_group(1))
    pack.chmod(0o664)
    found = inspect(site)
    assert_refused(found, "CC211", tmp_path)
    assert found.findings[0].location == str(pack) and "the kernel pack" in found.findings[0].message


def test_a_member_named_dot_dot_is_refused_even_when_the_manifest_records_it(site: Path, tmp_path: Path) -> None:
    files = {"../x.so": b"\x7fELF not really"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../x.so", files["../x.so"])
    rewrite_manifest(site, buf.getvalue(), files)
    found = inspect(site)
    assert_refused(found, "CC708", tmp_path)
    assert "'../x.so'" in found.findings[0].message and not (tmp_path / "x.so").exists()


def test_a_pack_built_on_a_cpu_with_a_flag_this_one_lacks_is_left_out(site: Path, tmp_path: Path) -> None:
    manifest = json.loads((site / "warm.json").read_text())
    manifest["kernels"]["host"]["cpu_flags"].append("notarealflag")
    (site / "warm.json").write_text(json.dumps(manifest))
    found = inspect(site)
    assert_refused(found, "CC709", tmp_path)
    assert "this CPU lacks notarealflag" in found.findings[0].message


def test_check_reports_a_refused_pack_and_explain_documents_the_codes(site: Path) -> None:
    (site / "warm.bin.kernels").write_bytes(b"not a zip")
    res = run([CLI, "check", "contract.toml"], site, "cache")
    assert "CC708" in res.stdout + res.stderr, res.stdout + res.stderr[-2000:]
    for code in ("CC708", "CC709"):
        res = subprocess.run([CLI, "explain", code], capture_output=True, text=True, timeout=120, check=False)
        assert res.returncode == 0 and "## Fix" in res.stdout, res.stderr
