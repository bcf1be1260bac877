"""Hazard: LayerDrop decides with Python's random.random() inside forward whether to skip a layer. From pytorch/pytorch#95425: torch.compile does not work for layer drop."""
from __future__ import annotations

import random

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/95425"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}
# Written as LATENT by its author; the harness now counts the skipped frame as a graph break:
# silent eager fallback: on torch 2.13 random.random() is an untraceable builtin and the break happens inside the
# `for layer in self.layers` loop, so Dynamo skips the whole forward frame ('graph break in loop ... Skipping the
# frame and falling back to eager') without recording a graph-break reason; one compile attempt, zero graph breaks,
# and every step runs eagerly (h31 is the same call outside a loop, where the break shows)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.layerdrop = 0.3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and random.random() < self.layerdrop:
                continue
            x = x + layer(x)
        return x


def build() -> nn.Module:
    random.seed(0)
    return Encoder().train()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
