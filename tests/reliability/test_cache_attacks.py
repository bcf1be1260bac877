"""Attacks on the Inductor cache directory (Inductor loads compiled code from it): another user's directory, a
world-writable parent, symlinks swapped in. `compile-contract doctor` must refuse each one (CC207) and stay silent on
a private directory. Real directories, real owners (os.chown as root), real symlinks, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

OTHER_UID = 54321

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another uid needs root")


def doctor(tmp_path: Path, cache_dir: Path | str) -> tuple[int, list[dict]]:
    """Run the real `compile-contract doctor` on a contract whose [cache] dir is `cache_dir`."""
    contract = tmp_path / "job.toml"
    contract.write_text(
        f'[contract]\nname = "attack"\n[cache]\ndir = "{cache_dir}"\nmin_free_gib = 0\nmin_free_inodes = 0\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)  # exported as the launcher would (else CC201 fires)
    proc = subprocess.run(
        [sys.executable, "-m", "contract.cli", "doctor", str(contract), "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)["findings"]


def insecure(findings: list[dict]) -> list[str]:
    return [f["location"] for f in findings if f["code"] == "CC207"]


def private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    path.chmod(0o700)
    return path


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A private parent (pytest's tmp dirs are 0700, under sticky /tmp)."""
    return private_dir(tmp_path / "home")


def test_a_private_cache_dir_is_accepted(tmp_path: Path, base: Path) -> None:
    rc, findings = doctor(tmp_path, private_dir(base / "inductor"))
    assert insecure(findings) == [] and rc == 0, findings


@root_only
def test_a_cache_dir_owned_by_another_uid_is_refused(tmp_path: Path, base: Path) -> None:
    cache = private_dir(base / "inductor")
    os.chown(cache, OTHER_UID, OTHER_UID)
    rc, findings = doctor(tmp_path, cache)
    assert rc == 1 and insecure(findings) == [str(cache)]


def test_a_world_writable_parent_without_the_sticky_bit_is_refused(tmp_path: Path, base: Path) -> None:
    shared = private_dir(base / "shared")
    shared.chmod(0o777)
    rc, findings = doctor(tmp_path, private_dir(shared / "inductor"))
    assert rc == 1 and insecure(findings) == [str(shared)]


def test_a_world_writable_grandparent_is_refused_even_when_the_dir_does_not_exist_yet(tmp_path, base) -> None:
    shared = private_dir(base / "shared")
    shared.chmod(0o777)
    rc, findings = doctor(tmp_path, shared / "a" / "b" / "inductor")
    assert rc == 1 and str(shared) in insecure(findings)


@root_only
def test_a_symlink_swapped_in_for_a_checked_dir_is_refused_at_the_next_check(tmp_path: Path, base: Path) -> None:
    cache = private_dir(base / "inductor")
    assert insecure(doctor(tmp_path, cache)[1]) == []
    planted = private_dir(tmp_path / "attacker")
    os.chown(planted, OTHER_UID, OTHER_UID)
    cache.rmdir()
    cache.symlink_to(planted)
    rc, findings = doctor(tmp_path, cache)
    assert rc == 1 and str(planted) in insecure(findings)


@root_only
def test_a_chain_of_symlinks_is_followed_to_the_other_users_dir(tmp_path: Path, base: Path) -> None:
    planted = private_dir(tmp_path / "attacker")
    os.chown(planted, OTHER_UID, OTHER_UID)
    (base / "hop2").symlink_to(planted)
    (base / "hop1").symlink_to(base / "hop2")
    rc, findings = doctor(tmp_path, base / "hop1")
    assert rc == 1 and str(planted) in insecure(findings)


@root_only
def test_a_parent_swapped_for_a_symlink_to_another_users_tree_is_refused(tmp_path: Path, base: Path) -> None:
    theirs = private_dir(tmp_path / "theirs")
    private_dir(theirs / "inductor")
    os.chown(theirs, OTHER_UID, OTHER_UID)
    (base / "cache-root").symlink_to(theirs)
    rc, findings = doctor(tmp_path, base / "cache-root" / "inductor")
    assert rc == 1 and str(theirs) in insecure(findings)


def test_a_dangling_symlink_into_a_world_writable_dir_is_refused_before_and_after_the_target_appears(
    tmp_path: Path, base: Path
) -> None:
    shared = private_dir(base / "drop")
    shared.chmod(0o1777)  # sticky like /tmp: anyone can create the link's target later, and own it
    link = base / "inductor"
    link.symlink_to(shared / "not-yet")
    rc, findings = doctor(tmp_path, link)
    assert rc == 1 and {f["code"] for f in findings if f["severity"] == "error"} == {"CC203"}, findings
    if os.geteuid() == 0:
        target = private_dir(shared / "not-yet")
        os.chown(target, OTHER_UID, OTHER_UID)
        rc, findings = doctor(tmp_path, link)
        assert rc == 1 and str(target) in insecure(findings)
