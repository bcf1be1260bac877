"""CC601: custom ops reached from a region's code without a fake implementation."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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


def test_custom_op_without_fake_is_reported_once_at_its_call_line_written_like_scan_locations(tmp_path: Path) -> None:
    findings = _findings(_load_example().build(), tmp_path)
    (line,) = expected_codes(EXAMPLE)["CC601"]
    where = f"{source_path(str(EXAMPLE))}:{line}"
    assert [(f.code, f.severity, f.location) for f in findings] == [("CC601", "warning", where)]
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


def test_the_reported_op_really_fails_to_compile_and_the_fake_one_compiles() -> None:
    example = _load_example()
    block = example.Block()
    block.compile(backend="eager")
    try:
        block(torch.randn(2, 8))
    except Exception as exc:  # torch._dynamo.exc.TorchRuntimeError
        assert "no fake impl registered" in str(exc)
    else:
        raise AssertionError("compiling a custom op without a fake implementation succeeded")
