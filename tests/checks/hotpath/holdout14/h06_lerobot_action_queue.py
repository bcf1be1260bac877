"""Hazard: a LeRobot ACT-style policy whose compiled `select_action` keeps a `deque` action queue on the policy: it predicts a chunk of actions only when the queue is empty and otherwise pops one; the queue's length changes on every control step, so the compiled frame fails the guard on it and recompiles once per queue length (0, 3, 2, 1) before the pattern repeats. From huggingface/lerobot#2061 (compile policies with torch.compile; benchmark compiles select_action)."""
from __future__ import annotations

from collections import deque

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/huggingface/lerobot/issues/2061"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class ACT(nn.Module):
    def __init__(self, chunk_size: int = 4) -> None:
        super().__init__()
        self.chunk_size = chunk_size
        self.backbone = nn.Linear(8, 16)
        self.action_head = nn.Linear(16, 2 * chunk_size)

    def forward(self, state):
        return self.action_head(self.backbone(state).relu()).view(state.shape[0], self.chunk_size, 2)


class ACTPolicy(nn.Module):
    def __init__(self, n_action_steps: int = 4) -> None:
        super().__init__()
        self.model = ACT(chunk_size=n_action_steps)
        self.n_action_steps = n_action_steps
        self.reset()

    def reset(self) -> None:
        self._action_queue = deque([], maxlen=self.n_action_steps)

    @torch.no_grad()
    def select_action(self, batch: dict) -> torch.Tensor:
        if len(self._action_queue) == 0:
            actions = self.model(batch["observation.state"])[:, : self.n_action_steps]
            # queue has shape (n_action_steps, batch_size, *), hence the transpose
            self._action_queue.extend(actions.transpose(0, 1))
        return self._action_queue.popleft()

    def forward(self, batch: dict) -> torch.Tensor:
        return self.select_action(batch)


def build() -> nn.Module:
    return ACTPolicy()


def step(model: nn.Module, i: int) -> None:
    """One control tick of the eval rollout: observe, call the policy, send the action to the robot."""
    observation = {"observation.state": torch.randn(1, 8)}
    model(observation)
