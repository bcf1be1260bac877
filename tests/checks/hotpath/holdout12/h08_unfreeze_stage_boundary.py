"""Hazard: a staged training pipeline compiles the network once with its reduced-basis embedding layer frozen and, at the stage-1 boundary, flips `requires_grad_(True)` on that layer's parameters of the already-compiled network to unfreeze it; torch 2.13 guards on the parameter's requires_grad and recompiles at the boundary (the report, on torch 2.9, saw no recompile and the layer silently never trained). From dingo-gw/dingo#407 (unfreezing the RB layer at a stage boundary does not recompile; the RB layer silently never trains)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/dingo-gw/dingo/pull/407"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # measured on the H100 machine


class FlowWrapper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers_rb = nn.Linear(8, 8)
        self.flow = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8))

    def forward(self, strain: torch.Tensor) -> torch.Tensor:
        return self.flow(self.layers_rb(strain))


STAGES = {0: {"freeze_rb_layer": True}, 4: {"freeze_rb_layer": False}}


def build() -> nn.Module:
    net = FlowWrapper()
    for p in net.layers_rb.parameters():
        p.requires_grad_(False)
    return net


def step(model: nn.Module, i: int) -> None:
    if i in STAGES:  # train_stages: apply the stage's freeze settings to the compiled network
        for p in model.layers_rb.parameters():
            p.requires_grad_(not STAGES[i]["freeze_rb_layer"])
    model(torch.randn(4, 8)).pow(2).mean().backward()
