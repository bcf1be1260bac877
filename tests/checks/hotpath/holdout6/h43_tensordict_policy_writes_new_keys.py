"""Hazard: a torchrl-style collector keeps one rollout `TensorDict` and refills its "observation" in place; the compiled actor writes "logits", "action" and "sample_log_prob" into it, so on the second step the shuttle has more keys than when it was traced and the guard `len(td._tensordict) == 1` fails and the actor recompiles. From pytorch/tensordict#1606 (`__setitem__` recompiles when internal dict length changes)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import SyncDataCollector, TensorDict

LABEL = "container"
SOURCE = "https://github.com/pytorch/tensordict/issues/1606"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class CategoricalActor(nn.Module):
    """TensorDictModule(ProbabilisticActor)-like: reads "observation", writes its outputs back into the tensordict."""

    def __init__(self, obs_dim: int = 8, num_actions: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, num_actions))

    def forward(self, td: TensorDict) -> TensorDict:
        logits = self.net(td["observation"])
        td["logits"] = logits
        action = logits.argmax(dim=-1)
        td["action"] = action
        td["sample_log_prob"] = torch.log_softmax(logits, dim=-1).gather(-1, action.unsqueeze(-1)).squeeze(-1)
        return td


class Agent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.actor = CategoricalActor()
        self.collector = SyncDataCollector(self.actor, reuse_buffer=True)


REGION = "actor"


def build() -> nn.Module:
    return Agent()


def step(model: nn.Module, i: int) -> None:
    model.collector.rollout_step()
