"""`compile-contract init` on the command line: where the contract and the report go, exit codes, and bad input
(a reference that does not import, a factory or step that raises, a file in the way): a clear located error on one
line, exit 2, and no file written half-way."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from contract.cli import main
from tests import ROOT

EAGER = ["--backend", "eager", "--steps", "3"]


def test_without_o_the_contract_goes_to_stdout_and_the_report_to_stderr() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "contract.cli", "init", "tests.init.models:noisy_factory"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    data = tomllib.loads(proc.stdout)
    assert data["contract"]["model"] == "tests.init.models:noisy_factory"
    assert data["region"] == [{"name": "plain", "module": ""}]
    assert "loading weights ... done" in proc.stderr and "contract check passed: <stdout>" in proc.stderr


def test_with_o_the_file_is_written_and_the_report_printed(tmp_path: Path, capsys) -> None:
    out = tmp_path / "plain.toml"
    assert (
        main(
            ["init", "tests.init.models:build_plain", "--step", "tests.init.models:plain_step", *EAGER, "-o", str(out)]
        )
        == 0
    )
    report = capsys.readouterr().out
    assert "regions: plain = '<root>'" in report and f"contract check passed: {out}" in report
    assert 'step = "tests.init.models:plain_step"' in out.read_text()


def test_the_hazard_model_is_written_with_its_finding_and_exits_1(tmp_path: Path, capsys) -> None:
    out = tmp_path / "hazard.toml"
    assert main(["init", "contract.demo:build_hazard_model", "-o", str(out)]) == 1
    report = capsys.readouterr().out
    assert "CC301" in report and "contract check failed" in report
    assert "# finding CC301 (error) at contract/demo.py:64" in out.read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tests.init.nope:build"], "cannot import 'tests.init.nope'"),
        (["tests.init.models:missing"], "has no attribute 'missing'"),
        (["tests.init.models:raising_factory"], "raised FileNotFoundError: checkpoint /nonexistent/model.pt at "),
        (["tests.init.models:not_a_module"], "returned dict, not an nn.Module"),
        (["contract.demo:build_model", "--step", "tests.init.nope:step"], "step 'tests.init.nope:step': cannot import"),
        (
            ["contract.demo:build_model", "--step", "tests.init.models:raising_step", *EAGER],
            "raised ValueError: batch 1 is missing at ",
        ),
        (
            ["contract.demo:build_model", "--step", "tests.init.models:two_args_step", *EAGER],
            "(the step's definition)",
        ),
    ],
    ids=["no-module", "no-attribute", "factory-raises", "not-a-module", "step-import", "step-raises", "step-signature"],
)
def test_bad_input_is_one_located_line_and_writes_nothing(argv, message, tmp_path: Path, capsys) -> None:
    out = tmp_path / "contract.toml"
    assert main(["init", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compile-contract: error: ") and err.count("\n") == 1, err
    assert message in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_located_errors_name_the_users_file_and_line(tmp_path: Path, capsys) -> None:
    main(["init", "contract.demo:build_model", "--step", "tests.init.models:raising_step", *EAGER])
    err = capsys.readouterr().err
    line = next(
        i
        for i, text in enumerate((ROOT / "tests/init/models.py").read_text().splitlines(), 1)
        if "batch 1 is missing" in text
    )
    assert f"tests/init/models.py:{line}" in err and "call 2 of 3" in err


def test_an_existing_file_is_kept_unless_update_or_force(tmp_path: Path, capsys) -> None:
    out = tmp_path / "c.toml"
    out.write_text("# mine\n")
    assert main(["init", "tests.init.models:build_plain", "-o", str(out)]) == 2
    assert "already exists; pass --update" in capsys.readouterr().err
    assert out.read_text() == "# mine\n"
    assert main(["init", "tests.init.models:build_plain", "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("# Compile contract for Plain")


def test_a_missing_output_directory_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["init", "tests.init.models:build_plain", "-o", str(tmp_path / "no" / "c.toml")]) == 2
    assert "does not exist; create it first" in capsys.readouterr().err


def test_steps_must_leave_a_call_after_warm_up(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["init", "tests.init.models:build_plain", "--step", "tests.init.models:plain_step", "--steps", "1"])
    assert exc.value.code == 2 and "record 2 to 1000 calls" in capsys.readouterr().err


def test_the_default_backend_is_the_installed_torchs_inductor_with_its_default_mode(tmp_path: Path, capsys) -> None:
    out = tmp_path / "demo.toml"
    assert main(["init", "contract.demo:build_model", "-o", str(out)]) == 0
    data = tomllib.loads(out.read_text())
    assert data["defaults"]["backend"] == "inductor" and data["defaults"]["mode"] == "default"
    assert data["contract"]["torch"].startswith(">=2.")
    assert data["cache"]["fx_graph_cache"] is True and data["cache"]["autograd_cache"] is True
    capsys.readouterr()
    assert main(["check", str(out)]) == 0, capsys.readouterr().out
