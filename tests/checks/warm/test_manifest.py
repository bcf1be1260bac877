"""The warm manifest's format and the comparisons the startup prediction and the monitor share (no compiling)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compile_formats import manifest as mf
from tests import ROOT

RECORD = {"compile_id": "0/0", "seconds": 3.0, "cold_seconds": 7.5, "lookups": [{"cache": "fx_graph", "key": "fk"}]}


def data(**extra: object) -> dict:
    return {"version": 1, "regions": {"layers": {"instances": {"layers.0.forward": [RECORD]}}}, **extra}


def test_a_written_manifest_reads_back_equal_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "warm.json"
    mf.write(path, data(environment={"torch": "2.13.0"}))
    manifest = mf.read(path)
    assert manifest.data == data(environment={"torch": "2.13.0"}) and sorted(p.name for p in path.parent.iterdir()) == [
        "warm.json"
    ]
    assert manifest.compile_record("layers.0.forward", 0) == RECORD and manifest.compile_record("x", 0) is None
    assert manifest.cost().text() == "about 7.5 s of compiling across 1 region instance"
    assert path.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "text, why",
    [
        ("{not json", "not JSON"),
        (json.dumps({"version": 2, "regions": {}}), "format version 2, this reader knows 1"),
        (json.dumps({"version": 1, "regions": []}), "regions: expected a JSON object"),
        (
            json.dumps(data() | {"regions": {"r": {"instances": {"i": {}}}}}),
            "regions.r.instances.i: expected a JSON array",
        ),
        (
            json.dumps(data() | {"regions": {"r": {"instances": {"i": [{"lookups": [{"cache": "x"}]}]}}}}),
            "regions.r.instances.i[0].lookups[0]: needs cache in",
        ),
    ],
    ids=["not-json", "version", "regions-array", "instance-object", "unknown-cache"],
)
def test_an_unusable_manifest_raises_one_line_naming_the_problem(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "warm.json"
    path.write_text(text)
    with pytest.raises(mf.ManifestError) as err:
        mf.read(path)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_inductors_component_lines_split_into_a_shared_table_and_diff_by_their_hashes() -> None:
    a = [
        "[h1] gm: GraphModule()\n\ndef forward(x):",
        "[h2] inductor_config[max_autotune]: False",
        "[h3] torch_version: \x00\x01",
    ]
    b = ["[h9] gm: GraphModule()", "[h2] inductor_config[max_autotune]: False", "[h3] torch_version: \x00\x01"]
    shared, own = mf.split_shared([mf.parse_components(a), mf.parse_components(a), mf.parse_components(b)])
    assert shared == {
        "gm": ["h1", ""],
        "inductor_config[max_autotune]": ["h2", "False"],
        "torch_version": ["h3", "<binary>"],
    }
    assert own == [{}, {}, {"gm": ["h9", ""]}]
    recorded = mf.recorded_components(shared, own[2])
    now = mf.parse_components(["[h9] gm: x", "[h7] inductor_config[max_autotune]: True", "[h4] torch_version: \x02"])
    assert [c.text() for c in mf.diff_components(recorded, now)] == [
        "inductor_config[max_autotune] False -> True",
        "torch_version hash h3 -> hash h4",
    ]


def test_a_torch_upgrade_is_one_change_that_hides_the_config_keys_it_brings() -> None:
    recorded = {"torch": "2.11.0", "python": "3.11.7", "config": {"inductor": {"a": 1}}, "env": {}}
    current = {
        "torch": "2.13.0",
        "python": "3.12.1",
        "config": {"inductor": {"a": 1, "b": 2}},
        "env": {"TORCHINDUCTOR_X": "1"},
    }
    changes = mf.environment_changes(recorded, current)
    assert [(c.text(), c.certain) for c in changes] == [
        ("torch 2.11.0 -> 2.13.0", True),
        ("Python 3.11.7 -> 3.12.1", False),
        ("env TORCHINDUCTOR_X unset -> 1", False),
    ]


def test_config_changes_name_the_key_and_the_cpu_thread_count_counts_only_when_inductor_hashed_it() -> None:
    recorded = {"torch": "2.13.0", "cpu_threads": 2, "config": {"inductor": {"max_autotune": False}, "dynamo": {}}}
    current = {"torch": "2.13.0", "cpu_threads": 8, "config": {"inductor": {"max_autotune": True}, "dynamo": {"x": 1}}}
    assert [c.text() for c in mf.environment_changes(recorded, current)] == [
        "inductor_config[max_autotune] false -> true",
        "dynamo_config[x] absent -> 1",
    ]
    recorded["cpu_threads_in_key"] = True
    assert mf.environment_changes(recorded, current)[0].text() == (
        "CPU threads (Inductor's cpp_runtime_thread_count) 2 -> 8"
    )


def test_doctor_reads_the_manifest_and_predicts_without_importing_torch(tmp_path: Path) -> None:
    (tmp_path / "warm.json").write_text(json.dumps(data(environment={"torch": "1.0.0", "env": {}})))
    (tmp_path / "c.toml").write_text('[contract]\nname = "x"\n[cache]\nmanifest = "warm.json"\nrequire_warm = true\n')
    code = (
        "import sys, json; from contract.pipeline import doctor; _, f = doctor(sys.argv[1], environ={}); "
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules), 'torch imported'; "
        "print(json.dumps([(x.code, x.severity, x.location) for x in f]))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "c.toml")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [["CC703", "error", "torch"]]


def test_require_warm_without_a_manifest_is_an_error_at_the_key(tmp_path: Path) -> None:
    from contract.pipeline import doctor

    (tmp_path / "c.toml").write_text('[contract]\nname = "x"\n[cache]\nrequire_warm = true\n')
    _, findings = doctor(tmp_path / "c.toml", environ={})
    assert [(f.code, f.severity, f.location) for f in findings] == [("CC702", "error", "cache.require_warm")]


def test_warm_without_a_manifest_key_is_a_usage_error_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[contract]\nname = "x"\nmodel = "m:build"\nstep = "m:step"\n')
    cli = str(Path(sys.executable).parent / "compile-contract")
    res = subprocess.run([cli, "warm", str(tmp_path / "c.toml")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().endswith('[cache] has no manifest; set manifest = "warm-manifest.json" to write one')
