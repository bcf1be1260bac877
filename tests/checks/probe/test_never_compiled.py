"""CC409: a region the step calls that Dynamo never compiles, with no graph break on record, is reported with its
cause; regions whose code may have run compiled through another region's compile are not."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from contract.pipeline import check


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(x))


class Chunked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor):
        for chunk in x.split(1):
            yield self.proj(chunk)


class Pair(nn.Module):
    """Two stacks of one block class: regional compilation with a region per stack."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.ModuleList(Block() for _ in range(2))
        self.decoder = nn.ModuleList(Block() for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in (*self.encoder, *self.decoder):
            x = block(x)
        return x


def cc4(tmp_path: Path, model: nn.Module, step, regions: dict[str, str]) -> list:
    body = "".join(f'[[region]]\nname = "{n}"\nmodule = "{m}"\nbackend = "eager"\n' for n, m in regions.items())
    path = tmp_path / "c.toml"
    path.write_text(f'[contract]\nname = "q"\n{body}[probe]\nsteps = 3\n')
    _, _, findings = check(path, model, step=step)
    return [f for f in findings if f.code.startswith("CC4")]


def plain(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))


def test_a_generator_forward_is_cc409_naming_the_generator(tmp_path):
    [finding] = cc4(tmp_path, Chunked(), lambda m, i: list(m(torch.randn(2, 8))), {"r": ""})
    assert finding.code == "CC409" and finding.severity == "error" and "generator" in finding.message


def test_a_region_called_under_a_dispatch_mode_is_cc409_naming_the_mode(tmp_path):
    def measured(model: nn.Module, i: int) -> None:
        with FlopCounterMode(display=False):
            plain(model, i)

    [finding] = cc4(tmp_path, Block(), measured, {"r": ""})
    assert finding.code == "CC409" and "FlopCounterMode" in finding.message


def test_a_second_region_of_the_same_class_served_by_the_first_ones_compile_is_not_reported(tmp_path):
    assert cc4(tmp_path, Pair(), plain, {"enc": "encoder.*", "dec": "decoder.*"}) == []


def test_a_region_the_step_never_calls_is_not_reported(tmp_path):
    model = nn.Module()
    model.used, model.unused = Block(), Chunked()
    assert cc4(tmp_path, model, lambda m, i: plain(m.used, i), {"a": "used", "b": "unused"}) == []


def test_a_region_that_compiles_is_not_reported(tmp_path):
    assert cc4(tmp_path, Block(), plain, {"r": ""}) == []
