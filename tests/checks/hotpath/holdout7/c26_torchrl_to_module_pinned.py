"""Clean: the torchrl DQN loss after pytorch/rl#3819: objectives route `to_module` through a helper that passes `preserve_module_state=False`, so tensordict never reaches its FutureWarning and the target-network swap inside the compiled loss traces without a break."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import to_module

LABEL = None
SOURCE = "https://github.com/pytorch/rl/pull/3819"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

PRESERVE_MODULE_STATE = False  # torchrl._utils._to_module pins the historical replacement behaviour


class DQNLoss(nn.Module):
    def __init__(self, gamma: float = 0.99) -> None:
        super().__init__()
        self.value_network = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.gamma = gamma
        self._target_names = [name for name, _ in self.value_network.named_parameters()]
        for name, p in self.value_network.named_parameters():
            self.register_buffer("target_value_network_params_" + name.replace(".", "_"), p.detach().clone())

    def target_value_network_params(self) -> dict:
        return {name: getattr(self, "target_value_network_params_" + name.replace(".", "_"))
                for name in self._target_names}

    def forward(self, obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor):
        q = self.value_network(obs).gather(-1, action[:, None]).squeeze(-1)
        old = to_module(self.target_value_network_params(), self.value_network,
                        preserve_module_state=PRESERVE_MODULE_STATE)
        try:
            next_q = self.value_network(next_obs).max(-1).values
        finally:
            to_module(old, self.value_network, preserve_module_state=False)
        target = reward + self.gamma * next_q
        return nn.functional.smooth_l1_loss(q, target.detach())


def build() -> nn.Module:
    return DQNLoss()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8), torch.randint(0, 4, (4,)), torch.randn(4), torch.randn(4, 8))
    loss.backward()
