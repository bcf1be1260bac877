"""CC408 (one graph per instance) under real torch.compile: it reads the guard that made Dynamo compile the shared
frame again for another instance. A guard on an input (the first block's input alone lacks grad) is no per-instance
state; a guard on the instance (`self.idx == 1`), or a compile for every instance, is."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from contract.pipeline import check

WIDTH = 8


class Indexed(nn.Module):
    """A block that multiplies by its own `int` index: Dynamo specializes each instance's graph on it."""

    def __init__(self, idx: int, width: int = WIDTH, out: int = WIDTH) -> None:
        super().__init__()
        self.lin = nn.Linear(width, out)
        self.idx = idx

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.idx


class Stack(nn.Module):
    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def train_step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, WIDTH)).sum().backward()


def probe_findings(tmp_path: Path, model: nn.Module, dynamic: str = "auto") -> list:
    path = tmp_path / "c.toml"
    path.write_text(
        f'[contract]\nname = "p"\n[[region]]\nname = "layers"\nmodule = "layers.*"\nbackend = "eager"\n'
        f'dynamic = "{dynamic}"\n[probe]\nsteps = 3\n'.replace('"false"', "false")
    )
    _, _, findings = check(path, model, step=train_step)
    return [f for f in findings if f.code.startswith("CC4")]


def test_identical_linear_blocks_whose_first_input_alone_lacks_grad_are_no_cc408(tmp_path: Path) -> None:
    """Four identical Linear blocks compile twice (the first block's input does not require grad, the others' do):
    two graphs for four layers, on a guard about the input, not the instance."""
    model = Stack([nn.Linear(WIDTH, WIDTH) for _ in range(4)])
    assert probe_findings(tmp_path, model) == []


def test_blocks_that_multiply_by_their_own_int_index_keep_cc408_naming_the_guard(tmp_path: Path) -> None:
    """Blocks specialized on their own `int` index compile once each: CC408 names the instance's guard."""
    [finding] = probe_findings(tmp_path, Stack([Indexed(i) for i in range(4)]))
    assert (finding.code, finding.severity, finding.location) == ("CC408", "warning", "layers")
    assert "4 instances" in finding.message and "self.idx ==" in finding.message


def test_instances_that_each_compile_keep_cc408_whatever_their_guard_names(tmp_path: Path) -> None:
    """Blocks of different widths under one glob (static shapes) compile once each, on input-size guards: the
    compiles grow with the instances, so it is still one graph per instance."""
    widths = [(8, 16), (16, 32), (32, 8)]
    model = Stack([Indexed(1, a, b) for a, b in widths])
    [finding] = probe_findings(tmp_path, model, dynamic="false")
    assert finding.code == "CC408" and "3 instances" in finding.message
