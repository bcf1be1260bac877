"""The compile-contract CLI: linter-style text, stable JSON, exit codes 0/1/2, rules and explain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contract.cli import main
from contract.report.catalog import RULES
from tests import ROOT
from tests.report.test_catalog import EXAMPLES

BROKEN = """
[contract]
name = "broken"
model = "example_models:build"

[[region]]
name = "layers"
module = "layers.*"
recompile_budjet = 1

[[region]]
name = "head"
module = "haed"
fullgraph = "yes"
"""


@pytest.fixture(autouse=True)
def _examples_on_path(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_demo_contract_passes_with_a_clean_report(capsys) -> None:
    assert main(["check", str(ROOT / "contracts" / "demo.toml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("contract check passed") and "(2 regions, 5 module methods)" in out


def test_the_summary_counts_one_region_and_one_method_in_the_singular(write_contract, capsys) -> None:
    path = write_contract(
        '[contract]\nname = "g"\nmodel = "example_models:build"\n[[region]]\nname = "h"\n'
        'module = "head"\nbackend = "eager"\n'
    )
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("(1 region, 1 module method)")


def test_a_pass_without_a_step_says_the_loop_was_not_scanned(write_contract, capsys) -> None:
    path = write_contract(
        '[contract]\nname = "g"\nmodel = "example_models:build"\n[[region]]\nname = "h"\n'
        'module = "head"\nbackend = "eager"\n'
    )
    assert main(["check", str(path)]) == 0
    assert "no step given" in capsys.readouterr().out.splitlines()[1]
    assert main(["check", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["step_given"] is False


README_SNIPPET = """
import contract, monitor
from contract.demo import build_hazard_model, build_model

model = build_model()
binding = contract.enforce(model, "contracts/demo.toml")
with monitor.start(binding) as mon:
    mon.mark_warm()
print("applied", sorted(binding.regions))
try:
    contract.enforce(build_hazard_model(), "contracts/demo-hazard.toml")
except contract.ContractViolation as exc:
    print("refused", sorted({f.code for f in exc.findings}))
print("exports", sorted(contract.__all__))
"""


def test_the_readme_engine_snippet_runs_in_a_fresh_interpreter() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_"))}
    proc = subprocess.run(
        [sys.executable, "-c", README_SNIPPET], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "applied ['layers', 'lm_head']",
        "refused ['CC301']",
        "exports ['Binding', 'ContractFileError', 'ContractViolation', 'enforce']",
    ]


def test_json_stays_parseable_when_the_model_and_step_print_to_stdout(tmp_path, write_contract) -> None:
    (tmp_path / "noisy.py").write_text(
        "import subprocess, torch\nfrom torch import nn\n\n"
        "def build():\n    print('loading weights')\n    subprocess.run(['echo', 'from a child process'])\n"
        "    return nn.Linear(4, 4)\n\n"
        "def step(model, i):\n    print('step', i)\n    return model(torch.ones(2, 4))\n"
    )
    path = write_contract(
        '[contract]\nname = "n"\nmodel = "noisy:build"\nstep = "noisy:step"\n'
        '[[region]]\nname = "all"\nmodule = ""\nbackend = "eager"\n[probe]\nsteps = 2\n'
    )
    exe = Path(sys.executable).with_name("compile-contract")
    proc = subprocess.run(
        [str(exe), "check", str(path), "--format", "json"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"] is True and report["regions"] == {"all": ["<root>.forward"]}
    assert "loading weights" in proc.stderr and "from a child process" in proc.stderr and "step 1" in proc.stderr


def test_a_claimed_property_that_raises_is_a_cc503_finding_not_a_traceback(tmp_path, write_contract, capsys) -> None:
    path = write_contract(
        '[contract]\nname = "p"\nmodel = "CC503_method_raises:build"\n[[region]]\n'
        'name = "root"\nmodule = ""\nmethods = ["generate"]\nbackend = "eager"\n'
    )
    assert main(["check", str(path), "--format", "json"]) == 1
    [f] = json.loads(capsys.readouterr().out)["findings"]
    assert (f["code"], f["location"]) == ("CC503", "region[0].methods")
    assert "RuntimeError: generation config not loaded" in f["message"]


def test_an_unexpected_exception_is_one_internal_error_line_and_exit_2(
    tmp_path, write_contract, capsys, monkeypatch
) -> None:
    (tmp_path / "odd_model.py").write_text(
        "from torch import nn\n\nclass Odd(nn.Linear):\n    def named_modules(self, *a, **k):\n"
        "        raise RuntimeError('registry\\nunavailable')\n\ndef build():\n    return Odd(2, 2)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_contract('[contract]\nname = "o"\nmodel = "odd_model:build"\n[[region]]\nname = "r"\nmodule = ""\n')
    assert main(["check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "compile-contract: internal error: RuntimeError: registry unavailable (please report)\n"


def test_a_contract_without_regions_warns_that_it_binds_nothing(write_contract, capsys) -> None:
    path = write_contract('[contract]\nname = "c"\nmodel = "example_models:build"\n[cache]\nmin_free_gib = 0.0\n')
    assert main(["check", str(path), "--format", "json"]) == 0
    [f] = json.loads(capsys.readouterr().out)["findings"]
    assert (f["code"], f["severity"], f["location"]) == ("CC009", "warning", "region")
    assert main(["check", str(path), "--strict"]) == 1
    capsys.readouterr()
    assert main(["doctor", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


def test_typo_bad_type_and_unmatched_glob_are_all_listed_in_text(write_contract, capsys) -> None:
    path = write_contract(BROKEN)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"contract check failed: 3 findings in {path} (3 errors, 0 warnings)")
    assert "region[0].recompile_budjet: CC001 unknown key 'recompile_budjet'" in out
    assert "region[1].fullgraph: CC003" in out and "region[1].module: CC501" in out
    assert "    fix: did you mean recompile_budget?" in out


def test_json_output_has_stable_keys(write_contract, capsys) -> None:
    path = write_contract(BROKEN)
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["contract"] == str(path)
    assert {f["code"] for f in report["findings"]} == {"CC001", "CC003", "CC501"}
    assert all(set(f) == {"code", "severity", "location", "message", "fix"} for f in report["findings"])


@pytest.mark.parametrize(
    "args,needle",
    [
        (["check", "/nonexistent/contract.toml"], "no such contract file"),
        (["check", "{good}", "--format", "yaml"], "invalid choice"),
        (["check", "{good}"], "no model to bind"),
        (["explain", "CC999"], "unknown rule code"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, needle, write_contract, capsys) -> None:
    good = write_contract('[contract]\nname = "g"\n[[region]]\nname = "l"\nmodule = "layers.*"\n')
    try:
        code = main([a.replace("{good}", str(good)) for a in args])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "Traceback" not in err
    assert len(err.splitlines()) == 1 or err.splitlines()[0].startswith("usage:")


@pytest.mark.parametrize(
    "args,location,needle",
    [
        (["--model", "no_such_pkg:build"], "contract.model", "cannot import 'no_such_pkg'"),
        (["--model", "example_models:nothing"], "contract.model", "has no attribute 'nothing'"),
        (["--model", "example_models:build", "--step", "no_such_pkg:step"], "contract.step", "cannot import"),
    ],
)
def test_an_unimportable_model_or_step_is_a_located_finding_with_exit_1(
    args, location, needle, write_contract, capsys
) -> None:
    good = write_contract('[contract]\nname = "g"\n[[region]]\nname = "l"\nmodule = "layers.*"\n')
    assert main(["check", str(good), *args, "--format", "json"]) == 1
    (found,) = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "CC010"]
    assert found["location"] == location and needle in found["message"] and found["fix"]


def test_a_model_that_cannot_be_imported_is_reported_with_every_document_finding_as_json(
    write_contract, capsys
) -> None:
    path = write_contract(BROKEN.replace("example_models:build", "no_such_pkg.models:build"))
    assert main(["check", str(path), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert {f["code"]: f["location"] for f in report["findings"]} == {
        "CC001": "region[0].recompile_budjet",
        "CC003": "region[1].fullgraph",
        "CC010": "contract.model",
    }
    assert report["ok"] is False and "Traceback" not in err


def test_model_factory_that_raises_is_reported_with_its_location(tmp_path, write_contract, capsys, monkeypatch) -> None:
    (tmp_path / "bad_factory.py").write_text("def build():\n    raise RuntimeError('no weights')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    good = write_contract('[contract]\nname = "g"\nmodel = "bad_factory:build"\n')
    assert main(["check", str(good)]) == 1
    out = capsys.readouterr().out
    assert "contract.model: CC010" in out and "RuntimeError: no weights" in out and "bad_factory.py:2" in out


def test_enforce_raises_the_same_cc010_finding_for_a_model_it_builds_from_the_contract(write_contract) -> None:
    import contract

    path = write_contract(BROKEN.replace("example_models:build", "no_such_pkg.models:build"))
    with pytest.raises(contract.ContractViolation) as info:
        contract.enforce(None, path)
    assert {f.code for f in info.value.findings} == {"CC001", "CC003", "CC010"}
    with pytest.raises(contract.ContractViolation) as info:
        contract.enforce("not a module", path)  # type: ignore[arg-type]
    assert "CC010" in {f.code for f in info.value.findings}


def test_rules_lists_every_rule_and_explain_prints_each_doc(capsys) -> None:
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == [r.code for r in RULES]
    for rule in RULES:
        assert main(["explain", rule.code.lower()]) == 0
        assert "## Fix" in capsys.readouterr().out


def test_console_script_runs_in_a_fresh_process() -> None:
    exe = Path(sys.executable).with_name("compile-contract")
    proc = subprocess.run([str(exe), "explain", "CC001"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("CC001 unknown-key")


def test_output_piped_into_a_reader_that_leaves_is_not_a_traceback() -> None:
    exe = Path(sys.executable).with_name("compile-contract")
    proc = subprocess.run(f"'{exe}' explain CC001 | head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("CC001") and "Traceback" not in proc.stderr
