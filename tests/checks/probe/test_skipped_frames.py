"""CC403 also catches a region whose frame Dynamo gives up on (a graph break in a loop runs the frame eager)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from contract.pipeline import check


class LoopItem(nn.Module):
    """`.item()` inside a Python loop: torch 2.13 skips the whole frame ("graph break in loop")."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = torch.tanh(self.lin(x))
            if x.sum().item() > 1e6:
                x = x * 0
        return x


def step(model: nn.Module, i: int) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.ones(2, 8))


def probe_findings(tmp_path: Path, model: nn.Module) -> list:
    path = tmp_path / "c.toml"
    path.write_text(
        '[contract]\nname = "loop"\n[[region]]\nname = "r"\nmodule = "body"\nbackend = "eager"\n[probe]\nsteps = 2\n'
    )
    net = nn.Module()
    net.body = model
    _, _, findings = check(path, net, step=lambda m, i: step(m.body, i))
    return [f for f in findings if f.code.startswith("CC4")]


def test_a_frame_dynamo_skips_for_a_graph_break_in_a_loop_is_reported_as_cc403_with_the_break_reason(tmp_path):
    [finding] = probe_findings(tmp_path, LoopItem())
    assert finding.code == "CC403" and "frame skipped, runs eager" in str(finding) and "item()" in str(finding)


def test_a_region_that_compiles_cleanly_gets_no_cc403(tmp_path):
    assert probe_findings(tmp_path, nn.Sequential(nn.Linear(8, 8), nn.ReLU())) == []
