"""Hazard: a forward pre-hook copies the current value of a global noise schedule onto the module before each call (diffusers-style hook state), and forward reads it. From huggingface/diffusers#9826: Pyramid Attention Broadcast rewrite + introduce hooks (per-step state carried by module hooks)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "pre-hook"
SOURCE = "https://github.com/huggingface/diffusers/pull/9826"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 0}

SCHEDULE = {"timestep": 0}


def set_timestep(module: nn.Module, args: tuple) -> None:
    module.timestep = SCHEDULE["timestep"]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.timestep = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        if self.timestep > 500:  # high-noise half of the schedule: damp the block
            return 0.5 * h
        return h


def build() -> nn.Module:
    SCHEDULE["timestep"] = 0
    block = Block()
    block.register_forward_pre_hook(set_timestep)
    return block


def step(model: nn.Module, i: int) -> None:
    SCHEDULE["timestep"] = 999 - 50 * i  # the sampler walks the timesteps down
    with torch.no_grad():
        model(torch.randn(4, 8))
