"""Clean: the LeRobot ACT policy with the action queue kept in eager Python: only the inner `model` (the network that predicts an action chunk) is compiled, `select_action` pops from the deque outside the compiled region and calls the model only when the queue runs dry, always with the same input shape, so the compiled forward is traced once. Look-alike of h06, from huggingface/lerobot#2061."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14.h06_lerobot_action_queue import ACTPolicy

LABEL = None
SOURCE = "https://github.com/huggingface/lerobot/issues/2061"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "model"


def build() -> nn.Module:
    return ACTPolicy()


def step(model: nn.Module, i: int) -> None:
    observation = {"observation.state": torch.randn(1, 8)}
    model.select_action(observation)
