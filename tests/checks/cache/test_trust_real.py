"""Real cache artifacts saved by torch from a real Inductor compile: damaged, resealed and planted copies of them in
`check`, `doctor` and real engine starts (one finding, nothing on stderr), and `warm --pin`."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from contract.checks.cache import container
from tests.checks.cache.artifacts_kit import container as make_container
from tests.checks.cache.artifacts_kit import entries, payload, planted, resealed
from tests.checks.cache.test_trust import CLEAN, CLI, HERE, engine, site

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> bytes:
    """Artifacts torch saved after compiling a small function with Inductor (an FX-graph and an AOTAutograd entry)."""
    where = tmp_path_factory.mktemp("real")
    out = where / "real.bin"
    res = subprocess.run(
        [sys.executable, str(HERE / "artifacts_kit.py"), "save", str(out)],
        env={**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(where / "cache")},
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return out.read_bytes()


LOADER_UNPICKLES = {(2, 13)}
"""The torch releases whose `load_cache_artifacts()` unpickles the Inductor entry while loading, read in each one's
`torch/_inductor/codecache.py`: 2.13.0's `InductorCacheArtifact.populate_cache` (lines 1837-1841) calls
`FxGraphCache._emit_triton_bundle`, which `pickle.loads` the entry (2123-2129, when Triton bundling is on: the default);
2.11.0 (1195-1198), 2.12.0 and 2.12.1 (1321-1324), 2.14.0 and 2.14.1 (1990-1993) and 2.15.0 (2036-2039) only write the
bytes into the cache dir. Every release unpickles an entry at the next compile of its key (`GuardedCache.
iterate_over_candidates`, plain `pickle.loads`: 2.11.0 line 1074, 2.13.0 1714, 2.15.0 1901)."""


def loader_unpickles() -> bool:
    """Whether the installed torch's loader runs a planted pickle (see LOADER_UNPICKLES)."""
    from importlib.metadata import version

    from packaging.version import Version

    return Version(version("torch")).release[:2] in LOADER_UNPICKLES


def kit(where, *args: str) -> subprocess.CompletedProcess:
    """`artifacts_kit.py ARGS` in a fresh process, its cache dir `where/cache` (a failed load or compile is fine)."""
    env = {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(where / "cache")}
    cmd = [sys.executable, str(HERE / "artifacts_kit.py"), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)


def codes(res: subprocess.CompletedProcess) -> list[tuple[str, str, str]]:
    return [(f["code"], f["severity"], f["location"]) for f in json.loads(res.stdout)["findings"]]


def test_torchs_own_file_passes_the_pure_python_reader(real: bytes) -> None:
    kinds = container.types(real)
    assert set(kinds) == {"inductor", "aot_autograd"} and all(len(keys) == 1 for keys in kinds.values())


def test_a_damaged_real_file_is_one_warning_in_check_doctor_and_enforce_and_nothing_on_stderr(
    tmp_path, real: bytes
) -> None:
    damaged = bytearray(real)
    damaged[len(real) // 2] ^= 0xFF
    path = site(tmp_path, bytes(damaged))
    expected = [("CC707", "warning", "cache.artifacts")]
    for command in (["check", "contract.toml"], ["doctor", "contract.toml"]):
        res = subprocess.run(
            [CLI, *command, "--format", "json"], cwd=path.parent, env=CLEAN, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0 and codes(res) == expected and res.stderr == "", res.stderr
    out, stderr = engine(path)
    assert out["violation"] is None and stderr == ""


def test_a_resealed_real_file_with_an_entry_cut_short_is_one_finding_before_torch_reads_it(
    tmp_path, real: bytes
) -> None:
    assert make_container(entries(real)) == real  # the kit writes torch's format byte for byte
    tampered = resealed(real)
    path = site(tmp_path, tampered, f'artifacts_sha256 = "{hashlib.sha256(tampered).hexdigest()}"')
    out, stderr = engine(path, "--strict")  # --strict: enforce's own warning refuses, so the test can see it
    [f] = out["violation"]
    assert (f["code"], f["location"]) == ("CC707", "cache.artifacts") and "is not a complete pickle" in f["message"]
    assert stderr == "" and not (path.parent / "cache" / "fxgraph").exists()


FOREIGN = b"ctorch._inductor.output_code\nCompiledFxGraphOfAnotherTorch\n)\x81."
"""A complete pickle of a class this torch lacks (GLOBAL, EMPTY_TUPLE, NEWOBJ, STOP): an entry from another torch."""


def test_an_entry_torch_cannot_unpickle_is_one_finding_where_its_loader_unpickles_and_is_written_unread_elsewhere(
    tmp_path, real: bytes
) -> None:
    parsed = entries(real)
    parsed["inductor"] = [(key, FOREIGN) for key, _ in parsed["inductor"]]
    foreign = make_container(parsed)
    container.types(foreign)
    path = site(tmp_path, foreign, f'artifacts_sha256 = "{hashlib.sha256(foreign).hexdigest()}"')
    out, stderr = engine(path, "--strict")
    assert stderr == "", stderr
    if loader_unpickles():
        [f] = out["violation"]
        assert (f["code"], f["location"]) == ("CC707", "cache.artifacts") and "were not loaded" in f["message"]
        assert "CompiledFxGraphOfAnotherTorch" in f["message"]
    else:
        assert out["violation"] is None
        [entry] = (path.parent / "cache" / "fxgraph").glob("*/*/*")
        assert entry.read_bytes() == FOREIGN  # its first compile will fail to unpickle it and compile cold


def test_a_pinned_real_file_warms_an_empty_cache_dir(tmp_path, real: bytes) -> None:
    path = site(tmp_path, real, f'artifacts_sha256 = "{hashlib.sha256(real).hexdigest()}"')
    out, stderr = engine(path, "--strict")
    assert out["violation"] is None and stderr == ""
    key = container.types(real)["inductor"][0]
    assert any((path.parent / "cache" / "fxgraph" / key[1:3] / key).iterdir())


def test_a_planted_pickle_runs_inside_torchs_loader_exactly_on_the_torch_versions_whose_loader_unpickles(
    tmp_path,
) -> None:
    marker = tmp_path / "planted"
    (tmp_path / "planted.bin").write_bytes(payload(str(marker)))
    kit(tmp_path, "load", str(tmp_path / "planted.bin"))
    assert marker.exists() == loader_unpickles()


def test_a_planted_pickle_under_a_real_key_runs_at_the_next_compile_of_that_key_on_every_torch(
    tmp_path, real: bytes
) -> None:
    marker = tmp_path / "planted"
    (tmp_path / "planted.bin").write_bytes(planted(real, str(marker)))
    kit(tmp_path, "load", str(tmp_path / "planted.bin"))
    marker.unlink(missing_ok=True)
    kit(tmp_path, "compile")  # a fresh process, the cache dir the loader wrote
    assert marker.exists()


def test_enforce_keeps_a_planted_pickle_under_a_real_key_out_of_torch(tmp_path, real: bytes) -> None:
    marker = tmp_path / "planted"
    path = site(tmp_path, planted(real, str(marker)), mode=0o666)
    out, _ = engine(path)
    assert [f["code"] for f in out["violation"]] == ["CC211"] and not marker.exists()
    assert not (path.parent / "cache" / "fxgraph").exists()


def test_warm_prints_the_digest_and_pin_writes_it_keeping_every_other_byte(tmp_path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "trust_model.py").write_text((HERE / "trust_model.py").read_text())
    text = (
        '# the contract\n[contract]\nname = "trust"\nmodel = "trust_model:build"\nstep = "trust_model:step"\n\n'
        '[[region]]\nname = "lin"\nmodule = "lin"\n\n[cache]\nmanifest = "warm.json"   # written by warm\n'
        'artifacts = "warm.bin"\nmin_free_gib = 0.01\n\n[probe]\nsteps = 3\n'
    )
    (root / "contract.toml").write_text(text)
    env = {**CLEAN, "TORCHINDUCTOR_CACHE_DIR": str(root / "cache")}
    res = subprocess.run(
        [CLI, "warm", "contract.toml", "--pin"], cwd=root, env=env, capture_output=True, text=True, timeout=400
    )
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    digest = hashlib.sha256((root / "warm.bin").read_bytes()).hexdigest()
    assert f"artifacts sha256: {digest}\n" in res.stdout and f'+artifacts_sha256 = "{digest}"' in res.stdout
    pinned = text.replace('artifacts = "warm.bin"\n', f'artifacts = "warm.bin"\nartifacts_sha256 = "{digest}"\n')
    assert (root / "contract.toml").read_text() == pinned
    doctor = subprocess.run(
        [CLI, "doctor", "contract.toml", "--strict"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert doctor.returncode == 0, doctor.stdout
