"""The `[cache] artifacts` file is compiled code: real files with real modes and owners (CC211), the pin (CC212,
CC213), damaged or foreign files (CC707, nothing on stderr), in `check`, `doctor` and real engine starts."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contract.checks import CheckContext
from contract.checks.cache import artifacts, container
from contract.checks.cache import check as cc2xx
from contract.checks.warm import check as cc7xx
from contract.document.load import load
from tests.checks.cache.artifacts_kit import container as make_container
from tests.checks.cache.artifacts_kit import entries, payload
from tests.report.test_catalog import EXAMPLES

HERE = Path(__file__).parent
CLI = str(Path(sys.executable).parent / "compile-contract")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}
SMALL = make_container({"autotune": [("ab/cdef.best_config", b'{"num_warps": 4}')]})
"""A well-formed artifacts file (one autotune entry: JSON), for the checks that never hand it to torch."""
SAVED = {
    "torch-2.11-h200-artifacts.bin.gz": {
        "inductor": ["fhc2ku72ztkyi3aayqt3rpabfvgdrxjvvvjgbffaf4avn3q6yu3y"],
        "aot_autograd": ["ah6qefsfjxbayxvlqzn2znoihfwewdxin3rlwo7mofu27psfgoqy"],
        "autotune": ["vy/4568a63823de5eaa34ae02b1de56c6162a69ffd92f6a5a26b8182c0887bb268c.best_config"],
    },
    "torch-2.13-cpu-artifacts.bin.gz": {
        "inductor": ["fiuytyldr24g7uepen265gicaqeutvsotstprhwuk43fpje23rx2"],
        "aot_autograd": ["ag5ncj5s2ckpk7vn2foswoe2dx5xcwvhw44udbacwj47qxvnqa6u"],
    },
    "torch-2.15-cpu-artifacts.bin.gz": {
        "inductor": ["fcoxiqzhufyb6fn6cwphhkxkvzzbehhorfbwptxntijaeq2cejk4"],
        "aot_autograd": ["azwfwwsiz3rqpi3beuqrftkwkqibmydjkue67jwzcltlo34yprla"],
    },
}
"""Artifacts files torch saved (in `data/`) -> their keys: torch 2.11.0+cu130 on an H200 (`relu(x) * 2` on CUDA: an
Inductor entry with its Triton bundle, an AOTAutograd entry, an autotune entry whose key holds a `/`), and
`artifacts_kit.py save` with torch 2.13.0+cpu and 2.15.0+cu132 on a host without a GPU."""


def site(tmp_path: Path, data: bytes, extra: str = "", *, mode: int = 0o644) -> Path:
    """A directory with the model, `contract.toml` (artifacts = "warm.bin") and the artifacts file; the contract."""
    root = tmp_path / "site"
    root.mkdir(exist_ok=True)
    shutil.copy(HERE / "trust_model.py", root)
    (root / "warm.bin").write_bytes(data)
    (root / "warm.bin").chmod(mode)
    contract = root / "contract.toml"
    contract.write_text(
        '[contract]\nname = "trust"\nmodel = "trust_model:build"\n\n[defaults]\nbackend = "eager"\n\n'
        f'[[region]]\nname = "lin"\nmodule = "lin"\n\n[cache]\nartifacts = "warm.bin"\n{extra}\n'
    )
    return contract


def checked(path: Path, *, strict: bool = False) -> list:
    """The cache and warm checks (as `check` and `doctor` run them) on a contract, in this process."""
    contract, findings = load(path)
    assert contract is not None and not findings, findings
    ctx = CheckContext(contract=contract, strict=strict)
    return list(cc2xx.check(ctx, environ=dict(CLEAN)) + cc7xx.doctor_check(ctx, environ=dict(CLEAN)))


def where(findings: list) -> list[tuple[str, str]]:
    return [(f.code, f.location) for f in findings]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], cwd=cwd, env=CLEAN, capture_output=True, text=True, timeout=300)


def engine(contract: Path, *args: str) -> tuple[dict, str]:
    """A real engine start in the contract's directory, its cache dir beside it: (its JSON line, its stderr)."""
    res = subprocess.run(
        [sys.executable, str(HERE / "trust_engine.py"), str(contract), *args],
        cwd=contract.parent,
        env={**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(contract.parent / "cache")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr


# -- CC211: who else could write the file ---------------------------------------------------------------------------


def test_a_private_artifacts_file_passes_and_is_read_for_loading(tmp_path) -> None:
    path = site(tmp_path, SMALL)
    assert checked(path) == []
    found = artifacts.inspect(load(path)[0])
    assert found.data == SMALL and found.sha256 == hashlib.sha256(SMALL).hexdigest()


def test_a_world_writable_artifacts_file_is_an_error_in_check_and_doctor(tmp_path) -> None:
    path = site(tmp_path, SMALL, mode=0o666)
    art = str(path.parent / "warm.bin")
    [f] = checked(path)
    assert (f.code, f.severity, f.location) == ("CC211", "error", art)
    assert "writable by every user (mode 0666)" in f.message and f.fix.startswith("chmod go-w")
    res = cli("doctor", "contract.toml", "--format", "json", cwd=path.parent)
    assert res.returncode == 1 and where(_findings(res)) == [("CC211", art)]


def test_the_example_contract_reports_cc211_on_a_real_mode_0666_file(tmp_path) -> None:
    example = tmp_path / "CC211.toml"
    example.write_text((EXAMPLES / "CC211_cache_artifacts_insecure.toml").read_text())
    (tmp_path / "open-artifacts.bin").write_bytes(SMALL)
    (tmp_path / "open-artifacts.bin").chmod(0o666)
    assert [f.code for f in checked(example)] == ["CC211"]


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to a second uid needs root")
def test_an_artifacts_file_owned_by_another_user_is_an_error(tmp_path) -> None:
    path = site(tmp_path, SMALL)
    os.chown(path.parent / "warm.bin", 12345, 12345)
    [f] = checked(path)
    assert f.code == "CC211" and "owned by uid 12345" in f.message


def test_an_artifacts_file_writable_by_a_group_with_other_members_is_an_error(tmp_path, unix_group) -> None:
    path = site(tmp_path, SMALL, mode=0o664)
    os.chown(path.parent / "warm.bin", 0, unix_group(1))
    [f] = checked(path)
    assert f.code == "CC211" and "writable by group cct" in f.message


def test_a_group_writable_file_of_a_group_without_other_members_is_fine(tmp_path, unix_group) -> None:
    path = site(tmp_path, SMALL, mode=0o664)
    os.chown(path.parent / "warm.bin", 0, unix_group(0))
    assert checked(path) == []


def test_a_symlink_to_a_world_writable_file_is_checked_at_its_target(tmp_path) -> None:
    target = tmp_path / "elsewhere.bin"
    target.write_bytes(SMALL)
    target.chmod(0o666)
    path = site(tmp_path, b"")
    (path.parent / "warm.bin").unlink()
    (path.parent / "warm.bin").symlink_to(target)
    [f] = checked(path)
    assert (f.code, f.location) == ("CC211", str(target)) and f"a symlink to {target}" in f.message


def test_a_symlink_to_a_private_file_is_fine(tmp_path) -> None:
    target = tmp_path / "shipped.bin"
    target.write_bytes(SMALL)
    path = site(tmp_path, b"")
    (path.parent / "warm.bin").unlink()
    (path.parent / "warm.bin").symlink_to(target)
    assert checked(path) == [] and artifacts.inspect(load(path)[0]).data == SMALL


def test_a_directory_others_can_write_is_an_error_at_that_directory(tmp_path) -> None:
    path = site(tmp_path, SMALL)
    path.parent.chmod(0o777)
    [f] = checked(path)
    assert (f.code, f.location) == ("CC211", str(path.parent)) and "writable by every user" in f.message


def test_a_sticky_world_writable_directory_like_tmp_is_fine(tmp_path) -> None:
    path = site(tmp_path, SMALL)
    path.parent.chmod(0o1777)
    assert checked(path) == []


def test_enforce_reads_a_private_pinned_file_once_and_loads_it_into_the_cache_dir(tmp_path) -> None:
    path = site(tmp_path, SMALL, f'artifacts_sha256 = "{hashlib.sha256(SMALL).hexdigest()}"')
    out, stderr = engine(path, "--strict", "--watch", str(path.parent / "warm.bin"))
    assert out == {"violation": None, "opened": 1} and stderr == ""
    assert (path.parent / "cache" / "ab" / "cdef.best_config").read_bytes() == b'{"num_warps": 4}'


def test_enforce_refuses_a_world_writable_file_without_opening_it(tmp_path) -> None:
    path = site(tmp_path, payload(str(tmp_path / "planted")), mode=0o666)
    out, stderr = engine(path, "--watch", str(path.parent / "warm.bin"))
    assert [f["code"] for f in out["violation"]] == ["CC211"]
    assert out["opened"] == 0 and not (tmp_path / "planted").exists()


# -- CC212 / CC213: the pin -----------------------------------------------------------------------------------------


def test_the_pinned_file_passes_and_any_other_is_an_error(tmp_path) -> None:
    digest = hashlib.sha256(SMALL).hexdigest()
    assert checked(site(tmp_path, SMALL, f'artifacts_sha256 = "{digest.upper()}"')) == []
    path = site(tmp_path, SMALL + b"x", f'artifacts_sha256 = "{digest}"')
    [f] = checked(path)
    assert (f.code, f.severity, f.location) == ("CC212", "error", "cache.artifacts_sha256")
    assert hashlib.sha256(SMALL + b"x").hexdigest() in f.message and digest in f.message


def test_enforce_refuses_a_file_that_is_not_the_pinned_one_and_torch_never_sees_it(tmp_path) -> None:
    marker = tmp_path / "planted"
    path = site(tmp_path, payload(str(marker)), f'artifacts_sha256 = "{hashlib.sha256(SMALL).hexdigest()}"')
    out, _ = engine(path)
    assert [f["code"] for f in out["violation"]] == ["CC212"] and not marker.exists()


def test_a_pin_that_is_not_a_sha256_is_a_document_error(tmp_path) -> None:
    contract, findings = load(site(tmp_path, SMALL, 'artifacts_sha256 = "abc"'))
    [f] = findings
    assert f.location == "cache.artifacts_sha256" and "64 hexadecimal digits" in f.message
    assert "compile-contract warm CONTRACT --pin" in f.fix


def test_unpinned_artifacts_are_reported_only_under_strict(tmp_path) -> None:
    path = site(tmp_path, SMALL)
    assert checked(path) == []
    [f] = checked(path, strict=True)
    assert (f.code, f.location) == ("CC213", "cache.artifacts")
    assert f'artifacts_sha256 = "{hashlib.sha256(SMALL).hexdigest()}"' in f.fix
    res = cli("doctor", "contract.toml", "--strict", "--format", "json", cwd=path.parent)
    assert res.returncode == 1 and where(_findings(res)) == [("CC213", "cache.artifacts")]


def test_the_cc213_example_is_reported_under_strict_only() -> None:
    example = EXAMPLES / "CC213_cache_artifacts_unpinned.toml"
    assert "CC213" not in {f.code for f in checked(example)}  # (its stand-in file is not torch's format: CC707)
    assert [f.code for f in checked(example, strict=True)] == ["CC213"]


# -- CC707: damaged or foreign files, found in pure Python --------------------------------------------------------


@pytest.mark.parametrize(
    "data, why",
    [
        (b"PK\x03\x04 a zip archive, not torch's", "checksum does not match"),
        (SMALL[:-3], "checksum does not match"),
        (make_container({"autotune": [("../../outside.best_config", b"{}")]}), "outside the cache dir"),
        (make_container({"nonsense": [("k", b"x")]}), "unknown artifact type 'nonsense'"),
    ],
    ids=["foreign", "truncated", "key-escapes-cache-dir", "unknown-type"],
)
def test_a_damaged_or_foreign_file_is_one_warning_and_never_reaches_torch(tmp_path, data, why) -> None:
    path = site(tmp_path, data)
    [f] = checked(path)
    assert (f.code, f.severity, f.location) == ("CC707", "warning", "cache.artifacts") and why in f.message
    assert artifacts.inspect(load(path)[0]).data is None


def test_a_length_past_the_end_is_refused_where_torchs_reader_would_loop_forever() -> None:
    body = (1).to_bytes(8, "big") + (1 << 40).to_bytes(8, "big")
    import zlib

    with pytest.raises(container.NotArtifacts, match="past the end"):
        container.types(zlib.crc32(body).to_bytes(4, "big") + body)


@pytest.mark.parametrize("name", sorted(SAVED))
def test_artifacts_torch_2_11_2_13_and_2_15_saved_pass_the_reader_and_every_check(tmp_path, name) -> None:
    data = gzip.decompress((HERE / "data" / name).read_bytes())
    assert container.types(data) == SAVED[name]
    path = site(tmp_path, data, f'artifacts_sha256 = "{hashlib.sha256(data).hexdigest()}"')
    assert checked(path, strict=True) == [] and artifacts.inspect(load(path)[0], strict=True).data == data


def saved(name: str = "torch-2.11-h200-artifacts.bin.gz") -> dict[str, list[tuple[str, bytes]]]:
    """The (key, content) pairs of a saved artifacts file, to damage one and reseal it."""
    return entries(gzip.decompress((HERE / "data" / name).read_bytes()))


def with_content(kind: str, content: bytes) -> bytes:
    """The saved 2.11 file with the content of its one `kind` entry replaced and the checksum recomputed."""
    parsed = saved()
    parsed[kind] = [(key, content) for key, _ in parsed[kind]]
    return make_container(parsed)


@pytest.mark.parametrize(
    "kind, content, why",
    [
        ("inductor", saved()["inductor"][0][1][:-1], "is not a complete pickle (cut short or damaged"),
        ("aot_autograd", saved()["aot_autograd"][0][1][:5000], "is not a complete pickle (cut short or damaged"),
        ("inductor", saved()["inductor"][0][1] + b"\x00", "has 1 bytes after the end of its pickle"),
        ("autotune", b'{"XBLOCK": 12', "is not JSON (cut short or damaged"),
    ],
    ids=["pickle-one-byte-short", "pickle-cut", "pickle-trailing-byte", "json-cut"],
)
def test_an_entry_cut_short_with_its_checksum_recomputed_is_one_located_warning(tmp_path, kind, content, why) -> None:
    path = site(tmp_path, with_content(kind, content))
    [f] = checked(path)
    assert (f.code, f.severity, f.location) == ("CC707", "warning", "cache.artifacts") and why in f.message
    assert f"the content of {kind} artifact" in f.message and "(bytes " in f.message and "warm CONTRACT" in f.fix


def test_a_format_version_no_torch_writes_is_one_located_warning_with_a_fix(tmp_path) -> None:
    body = (2).to_bytes(8, "big") + make_container(saved())[12:]
    import zlib

    path = site(tmp_path, zlib.crc32(body).to_bytes(4, "big") + body)
    [f] = checked(path)
    assert (f.code, f.location) == ("CC707", "cache.artifacts") and "format version 2 at byte 4" in f.message
    assert f.fix.startswith("run `compile-contract warm CONTRACT` with this torch")


def test_every_cut_inside_a_resealed_file_is_refused_and_any_damage_is_notartifacts_never_another_error() -> None:
    import random
    import zlib

    def sealed(body: bytes) -> bytes:
        return zlib.crc32(body).to_bytes(4, "big") + body

    pickled = pickle.dumps({"code": "def f(): pass", "n": [1, 2.5, None]}, protocol=4)
    first = make_container({"inductor": [("fkey", pickled)]})[4:]
    body = first + make_container({"autotune": [("ab/cd.best_config", b'{"w": 4}')]})[12:]
    accepted = []
    for n in range(len(body)):
        with contextlib.suppress(container.NotArtifacts):
            container.types(sealed(body[:n]))
            accepted.append(n)
    assert accepted == [len(first)]  # only the cut between two types leaves a file torch could have written
    rng = random.Random(34)
    for _ in range(3000):
        damaged = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        with contextlib.suppress(container.NotArtifacts):
            container.types(sealed(bytes(damaged)))


def test_the_artifact_types_are_the_ones_the_installed_torch_registers() -> None:
    from torch.compiler._cache import CacheArtifactFactory, CacheArtifactManager

    CacheArtifactManager._ensure_cache_artifacts_registered()
    assert set(CacheArtifactFactory._artifact_types) == container.TYPES


def _findings(res: subprocess.CompletedProcess) -> list:
    from contract.findings import Finding

    return [Finding(**f) for f in json.loads(res.stdout)["findings"]]
