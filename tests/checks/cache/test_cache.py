"""CC2xx: the Inductor cache preflight on real directories, mounts, owners, subprocesses and a real Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract.checks import CheckContext
from contract.checks.cache import check as cc2xx
from contract.checks.cache import remote
from contract.document.load import load
from contract.env import default_cache_dir, take_snapshot
from tests import ROOT
from tests.report.test_catalog import EXAMPLES

CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}
"""This process's environment without any cache variable (the healthy default setup)."""


def run_cache(path: Path, environ: dict[str, str] | None = None, *, before: dict[str, str] | None = None):
    """cc2xx.check on a contract, with `before` as the pre-import snapshot and `environ` as the environment now."""
    contract, findings = load(path)
    assert contract is not None and not findings, findings
    environ = dict(CLEAN) if environ is None else environ
    snapshot = take_snapshot(environ=before if before is not None else environ, modules={})
    return cc2xx.check(CheckContext(contract=contract, snapshot=snapshot), environ=environ, timeout_s=1.0)


def cache_contract(write_contract, body: str = "") -> Path:
    return write_contract(f'[contract]\nname = "c"\n\n[cache]\n{body}\n')


def codes(findings) -> set[str]:
    return {f.code for f in findings}


def with_dir(path: Path) -> dict[str, str]:
    """The environment a launcher exports for a cache dir."""
    return {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(path)}


def test_default_cache_on_a_default_setup_reports_nothing(write_contract) -> None:
    assert run_cache(write_contract('[contract]\nname = "c"\n')) == []


def test_a_healthy_exported_cache_dir_reports_nothing(write_contract, tmp_path) -> None:
    cache = tmp_path / "inductor"
    path = cache_contract(
        write_contract,
        f'dir = "{cache}"\nrequire_persistent = true\nfx_graph_cache = true\n'
        "autograd_cache = true\nmin_free_inodes = 100",
    )
    assert run_cache(path, with_dir(cache)) == []


def test_contract_dir_that_torch_will_not_use_names_the_export_fix(write_contract, tmp_path) -> None:
    path = cache_contract(write_contract, f'dir = "{tmp_path / "inductor"}"')
    [f] = run_cache(path)
    assert (f.code, f.location) == ("CC201", "TORCHINDUCTOR_CACHE_DIR")
    assert f.fix == f"export TORCHINDUCTOR_CACHE_DIR={tmp_path / 'inductor'} before python starts"


def test_relative_cache_dir_variable_is_an_error(write_contract, tmp_path) -> None:
    found = run_cache(
        EXAMPLES / "CC202_cache_dir_not_absolute.toml", {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": "cache/inductor"}
    )
    assert codes(found) == {"CC202"} and found[0].location == "TORCHINDUCTOR_CACHE_DIR"


def test_relative_value_rewritten_absolute_by_torch_is_still_reported_from_the_snapshot(write_contract) -> None:
    now = {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": os.path.abspath("cache/inductor")}
    found = run_cache(
        cache_contract(write_contract), now, before={**CLEAN, "TORCHINDUCTOR_CACHE_DIR": "cache/inductor"}
    )
    assert codes(found) == {"CC202"}


def test_a_file_in_the_way_makes_the_dir_unusable(write_contract, tmp_path) -> None:
    (tmp_path / "file").write_text("x")
    found = run_cache(cache_contract(write_contract), with_dir(tmp_path / "file" / "inductor"))
    assert codes(found) == {"CC203"} and "not a directory" in found[0].message


def test_a_read_only_filesystem_makes_the_dir_unusable(write_contract, tmpfs) -> None:
    ro = tmpfs("size=1m,ro")
    found = run_cache(cache_contract(write_contract, "min_free_gib = 0.0"), with_dir(ro / "inductor"))
    assert codes(found) == {"CC203"} and "not writable" in found[0].message


def test_torch_default_tmp_dir_is_not_persistent_when_required(write_contract) -> None:
    [f] = run_cache(EXAMPLES / "CC204_cache_dir_not_persistent.toml")
    assert (f.code, f.location) == ("CC204", default_cache_dir())


def test_a_real_tmpfs_is_not_persistent_when_required(write_contract, tmpfs) -> None:
    mnt = tmpfs("size=1m")
    body = "require_persistent = true\nmin_free_gib = 0.0"
    found = run_cache(cache_contract(write_contract, body), with_dir(mnt / "inductor"))
    assert codes(found) == {"CC204"} and "tmpfs" in found[0].message


def test_a_real_tmpfs_is_fine_when_persistence_is_not_required(write_contract, tmpfs) -> None:
    mnt = tmpfs("size=1m")
    assert run_cache(cache_contract(write_contract, "min_free_gib = 0.0"), with_dir(mnt / "inductor")) == []


def test_a_noexec_mount_is_an_error(write_contract, tmpfs) -> None:
    mnt = tmpfs("size=1m,noexec")
    found = run_cache(cache_contract(write_contract, "min_free_gib = 0.0"), with_dir(mnt / "inductor"))
    assert codes(found) == {"CC205"} and "noexec" in found[0].message


def test_noexec_example_fires_on_a_real_noexec_mount(tmp_path, tmpfs) -> None:
    mnt = tmpfs("size=2g,noexec")  # virtual size: tmpfs uses memory only for what is written
    example = tmp_path / "CC205.toml"
    example.write_text((EXAMPLES / "CC205_cache_dir_noexec.toml").read_text().replace("noexec-mount", str(mnt)))
    assert codes(run_cache(example, with_dir(mnt / "inductor"))) == {"CC205"}


def test_a_full_real_filesystem_fails_min_free_gib(write_contract, tmpfs) -> None:
    mnt = tmpfs("size=1m")
    found = run_cache(cache_contract(write_contract), with_dir(mnt / "inductor"))
    assert codes(found) == {"CC206"} and "GiB free" in found[0].message


def test_too_few_free_inodes_fail_min_free_inodes(write_contract, tmpfs) -> None:
    mnt = tmpfs("size=1m,nr_inodes=50")
    found = run_cache(
        cache_contract(write_contract, "min_free_gib = 0.0\nmin_free_inodes = 1000"), with_dir(mnt / "inductor")
    )
    assert codes(found) == {"CC206"} and "inodes" in found[0].message


def test_an_impossible_space_threshold_fails_on_the_real_disk(write_contract, tmp_path) -> None:
    found = run_cache(cache_contract(write_contract, "min_free_gib = 1000000.0"), with_dir(tmp_path / "inductor"))
    assert codes(found) == {"CC206"}


def test_a_world_writable_parent_without_sticky_bit_is_insecure(write_contract, tmp_path) -> None:
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)
    example = tmp_path / "CC207.toml"
    example.write_text((EXAMPLES / "CC207_cache_dir_insecure.toml").read_text())
    found = run_cache(example, with_dir(parent / "inductor"))
    assert [(f.code, f.location) for f in found] == [("CC207", str(parent))]


def test_a_sticky_world_writable_parent_like_tmp_is_fine(write_contract, tmp_path) -> None:
    parent = tmp_path / "sticky"
    parent.mkdir()
    parent.chmod(0o1777)
    assert run_cache(cache_contract(write_contract), with_dir(parent / "inductor")) == []


def test_a_world_writable_cache_dir_is_insecure_even_with_the_sticky_bit(write_contract, tmp_path) -> None:
    cache = tmp_path / "inductor"
    cache.mkdir()
    cache.chmod(0o1777)
    assert [(f.code, f.location) for f in run_cache(cache_contract(write_contract), with_dir(cache))] == [
        ("CC207", str(cache))
    ]


def test_a_symlink_into_a_world_writable_dir_is_checked_at_its_real_path(write_contract, tmp_path) -> None:
    open_dir = tmp_path / "open"
    (open_dir / "inductor").mkdir(parents=True)
    open_dir.chmod(0o777)
    link = tmp_path / "cache"
    link.symlink_to(open_dir / "inductor")
    found = run_cache(cache_contract(write_contract), with_dir(link))
    assert [(f.code, f.location) for f in found] == [("CC207", str(open_dir))]


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to a second uid needs root")
def test_a_cache_dir_owned_by_another_user_is_insecure(write_contract, tmp_path) -> None:
    cache = tmp_path / "inductor"
    cache.mkdir()
    os.chown(cache, 12345, 12345)
    [f] = run_cache(cache_contract(write_contract), with_dir(cache))
    assert f.code == "CC207" and "uid 12345" in f.message


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to a second uid needs root")
def test_a_parent_owned_by_another_user_is_insecure(write_contract, tmp_path) -> None:
    parent = tmp_path / "theirs"
    (parent / "inductor").mkdir(parents=True)
    os.chown(parent, 12345, 12345)
    found = run_cache(cache_contract(write_contract), with_dir(parent / "inductor"))
    assert [(f.code, f.location) for f in found] == [("CC207", str(parent))]


def test_a_required_cache_disabled_by_env_is_an_error_before_import() -> None:
    snapshot_env = {**CLEAN, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
    contract, _ = load(EXAMPLES / "CC208_required_cache_disabled.toml")
    found = cc2xx._disabled(contract.cache, snapshot_env, None)
    assert [(f.code, f.location) for f in found] == [("CC208", "TORCHINDUCTOR_FX_GRAPH_CACHE")]


def test_force_disable_caches_turns_off_both_required_caches(write_contract) -> None:
    contract, _ = load(cache_contract(write_contract, "fx_graph_cache = true\nautograd_cache = true"))
    found = cc2xx._disabled(contract.cache, {**CLEAN, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}, None)
    assert [f.location for f in found] == ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] * 2


SUBPROCESS = """
import json, os, sys
import contract
{before}
import torch._dynamo
{after}
from contract.checks import CheckContext
from contract.document.load import load
from contract.checks.cache import check as cc2xx
c, _ = load(sys.argv[1])
found = cc2xx.check(CheckContext(contract=c))
import torch._inductor.config as ic
print(json.dumps({{"effective": ic.fx_graph_cache, "findings": [[f.code, f.location] for f in found]}}))
"""


def run_subprocess(contract: Path, before: str = "", after: str = "") -> dict:
    code = SUBPROCESS.format(before=before, after=after)
    env = {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": default_cache_dir()}
    res = subprocess.run(
        [sys.executable, "-c", code, str(contract)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_a_variable_set_after_import_torch_dynamo_is_reported_as_too_late(write_contract) -> None:
    out = run_subprocess(
        write_contract('[contract]\nname = "c"\n'), after='os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"'
    )
    assert out["effective"] is True
    assert out["findings"] == [["CC201", "TORCHINDUCTOR_FX_GRAPH_CACHE"]]


def test_the_same_variable_set_before_import_is_effective_and_silent(write_contract) -> None:
    out = run_subprocess(
        write_contract('[contract]\nname = "c"\n'), before='os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"'
    )
    assert out == {"effective": False, "findings": []}


def test_required_cache_off_in_the_effective_config_is_reported_in_process() -> None:
    out = run_subprocess(
        EXAMPLES / "CC208_required_cache_disabled.toml", before='os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"'
    )
    assert out["findings"] == [["CC208", "TORCHINDUCTOR_FX_GRAPH_CACHE"]]


def test_a_live_redis_answers_and_reports_nothing_unreachable(write_contract, start_redis) -> None:
    server = start_redis()
    found = run_cache(cache_contract(write_contract, f'remote = "{server.url}"'))
    assert "CC209" not in codes(found)


def test_a_redis_that_is_down_is_an_error_naming_host_and_port(write_contract, start_redis) -> None:
    server = start_redis()
    server.stop()
    found = [f for f in run_cache(cache_contract(write_contract, f'remote = "{server.url}"')) if f.code == "CC209"]
    assert len(found) == 1 and f"127.0.0.1:{server.port}" in found[0].message and found[0].location == "cache.remote"


def test_redis_with_a_password_answers_with_the_right_one_and_refuses_a_wrong_one(start_redis) -> None:
    server = start_redis("--requirepass", "s3cret")
    assert remote.check_remote(server.url) == []
    [f] = remote.check_remote(f"redis://:wrong@127.0.0.1:{server.port}")
    assert f.code == "CC209" and "AUTH" in f.message
    [f] = remote.check_remote(f"redis://127.0.0.1:{server.port}")
    assert "NOAUTH" in f.message


def test_remote_cache_not_enabled_in_torch_is_a_warning(tmp_path, start_redis) -> None:
    server = start_redis("--requirepass", "secret")
    example = tmp_path / "CC210.toml"
    example.write_text(
        (EXAMPLES / "CC210_remote_cache_not_used.toml")
        .read_text()
        .replace("redis://:secret@127.0.0.1:6379", server.url)
    )
    found = run_cache(example)
    assert codes(found) == {"CC210"} and all(f.severity == "warning" for f in found)
    assert "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE" in {f.location for f in found}


def test_remote_cache_enabled_and_pointed_at_the_server_leaves_only_a_missing_package(
    write_contract, start_redis
) -> None:
    import importlib.util

    server = start_redis()
    env = {**CLEAN, "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_REDIS_URL": server.url}
    contract, _ = load(cache_contract(write_contract, f'remote = "{server.url}"'))
    found = remote.remote_unused(server.url, env, None)
    expected = [] if importlib.util.find_spec("redis") else [("CC210", "cache.remote")]
    assert [(f.code, f.location) for f in found] == expected


def test_a_redis_url_with_a_username_is_parsed_with_its_acl_user() -> None:
    addr = remote.redis_address("rediss://cache%40ops:p%3Ass@redis.internal:6380/0")
    assert (addr.host, addr.port, addr.username, addr.password, addr.tls) == (
        "redis.internal",
        6380,
        "cache@ops",
        "p:ss",
        True,
    )
    assert remote.redis_address("redis://:pw@h").username is None


def test_redis_with_an_acl_user_answers_to_auth_user_password(start_redis) -> None:
    server = start_redis("--user", "inductor", "on", ">s3cret", "~*", "+@all")
    assert remote.check_remote(f"redis://inductor:s3cret@127.0.0.1:{server.port}/0") == []
    [f] = remote.check_remote(f"redis://inductor:wrong@127.0.0.1:{server.port}/0")
    assert f.code == "CC209" and "AUTH refused" in f.message


@pytest.mark.parametrize("primary", [False, True], ids=["listed-member", "primary-group-member"])
def test_a_parent_writable_by_a_group_with_other_members_is_insecure(
    write_contract, tmp_path, unix_group, primary
) -> None:
    shared = tmp_path / "shared"
    (shared / "inductor").mkdir(parents=True)
    os.chown(shared, 0, unix_group(1, primary=primary))
    shared.chmod(0o770)
    found = run_cache(cache_contract(write_contract), with_dir(shared / "inductor"))
    assert [(f.code, f.location) for f in found] == [("CC207", str(shared))]
    assert "writable by group cct" in found[0].message and found[0].fix.startswith(f"chmod g-w {shared}")


def test_a_group_writable_cache_dir_is_insecure_even_with_the_sticky_bit(write_contract, tmp_path, unix_group) -> None:
    cache = tmp_path / "inductor"
    cache.mkdir()
    os.chown(cache, 0, unix_group(1))
    cache.chmod(0o1770)
    assert [(f.code, f.location) for f in run_cache(cache_contract(write_contract), with_dir(cache))] == [
        ("CC207", str(cache))
    ]


def test_a_group_writable_dir_of_a_group_without_other_members_is_fine(write_contract, tmp_path, unix_group) -> None:
    shared = tmp_path / "private-group"
    (shared / "inductor").mkdir(parents=True)
    os.chown(shared, 0, unix_group(0))
    shared.chmod(0o770)
    assert run_cache(cache_contract(write_contract), with_dir(shared / "inductor")) == []
