"""Hazard: the RL rollout loop anneals the sampling temperature and passes it to the compiled policy head as a Python float argument; Dynamo first specialises on the float's value and recompiles when the schedule moves it. From pytorch/pytorch#149405 ([torch.compile] Recompiles due to Python float object)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/149405"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class PolicyHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(8, 8)
        self.logits = nn.Linear(8, 6)

    def forward(self, obs: torch.Tensor, temperature: float) -> torch.Tensor:
        logits = self.logits(torch.tanh(self.trunk(obs)))
        return torch.softmax(logits / temperature, dim=-1)


def build() -> nn.Module:
    return PolicyHead()


def temperature_schedule(i: int, start: float = 1.0, end: float = 0.3, steps: int = 8) -> float:
    return start + (end - start) * i / (steps - 1)


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        probs = model(torch.randn(4, 8), temperature_schedule(i))
        torch.multinomial(probs, 1)
