"""Hazard: the forward defines a small helper class (a per-call output record) inside the compiled function; Dynamo cannot trace `LOAD_BUILD_CLASS`, so the frame graph-breaks, and the resume function guards on the identity of the class object, which is new on every call, so it recompiles every step. From pytorch/pytorch#161562 (set_fullgraph(False) actually skips the frame if a graph break happens)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/161562"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 1}


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x) + 10

        class Output:
            def __init__(self, logits: torch.Tensor) -> None:
                self.logits = logits

        out = Output(x)
        return out.logits - y


def build() -> nn.Module:
    return Head()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 8)).sum().backward()
