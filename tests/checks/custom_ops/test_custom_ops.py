"""CC601: custom ops reached from a region's code without a fake implementation."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
import torch
from torch import nn

from contract.findings import source_path
from contract.pipeline import check
from tests.report.test_catalog import EXAMPLES, expected_codes

EXAMPLE = EXAMPLES / "CC601_custom_op_without_fake.py"
CONTRACT = """
[contract]
name = "cc601"

[[region]]
name = "blocks"
module = "blocks.*"
"""


def _load_example():
    spec = importlib.util.spec_from_file_location("cc601_example_module", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _findings(model: nn.Module, tmp_path: Path, contract: str = CONTRACT) -> list:
    path = tmp_path / "c.toml"
    path.write_text(contract)
    return [f for f in check(path, model)[2] if f.code.startswith("CC6")]


def marked(path: Path) -> set[tuple[int, str]]:
    """(line, severity) of each `# expect: CC601` mark (`# expect: CC601 warning` for a warning)."""
    lines = path.read_text().splitlines()
    return {
        (n, "warning" if "expect: CC601 warning" in lines[n - 1] else "error") for n in expected_codes(path)["CC601"]
    }


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("CC601*.py")), ids=lambda p: p.name)
def test_example_reports_each_marked_call_with_its_severity_and_nothing_else(
    path: Path, tmp_path: Path, monkeypatch
) -> None:
    """A call every compiled call makes is an error; one behind a condition the scan cannot decide is a warning."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    findings = _findings(importlib.import_module(path.stem).build(), tmp_path)
    lines = {(int(f.location.rpartition(":")[2]), f.severity) for f in findings}
    assert all(f.location.startswith(source_path(str(path)) + ":") for f in findings), [str(f) for f in findings]
    assert lines == marked(path), [str(f) for f in findings]


def test_custom_op_without_fake_is_reported_once_at_its_call_line_written_like_scan_locations(tmp_path: Path) -> None:
    findings = _findings(_load_example().build(), tmp_path)
    (line,) = expected_codes(EXAMPLE)["CC601"]
    where = f"{source_path(str(EXAMPLE))}:{line}"
    assert [(f.code, f.severity, f.location) for f in findings] == [("CC601", "error", where)]
    assert not where.startswith("/")  # relative to the working directory, as CC3xx locations are
    assert "cc601_example::fused_gelu" in findings[0].message and "register_fake" in findings[0].fix


def test_custom_op_object_held_on_the_module_is_resolved(tmp_path: Path) -> None:
    example = _load_example()

    class ViaAttribute(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.kernel = example.fused_gelu

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.kernel(x)

    model = nn.Module()
    model.blocks = nn.ModuleList([ViaAttribute()])
    assert [f.code for f in _findings(model, tmp_path)] == ["CC601"]


def test_ops_with_fake_or_meta_kernels_and_eager_regions_are_not_reported(tmp_path: Path) -> None:
    example = _load_example()

    class Fine(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.aten.gelu.default(torch.ops.cc601_example.fused_gelu_ok(x))

    model = nn.Module()
    model.blocks = nn.ModuleList([Fine()])
    assert _findings(model, tmp_path) == []
    eager = CONTRACT + 'enabled = false\nreason = "kernel has no fake yet"\n'
    assert _findings(example.build(), tmp_path, eager) == []


@pytest.mark.parametrize("name", ["CC601_custom_op_without_fake", "CC601_called_on_every_call"])
def test_a_block_reported_as_an_error_really_fails_its_first_compiled_call(name: str, monkeypatch) -> None:
    """The error is a certain crash: the first compiled call of the example's block fails while tracing."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    block = importlib.import_module(name).Block()
    block.compile(backend="eager")
    with pytest.raises(Exception, match="no fake impl registered"):  # torch._dynamo.exc.TorchRuntimeError
        block(torch.randn(2, 8))
