"""Hazard: a PPO loop uses one compiled actor-critic both to collect rollouts under `torch.inference_mode()` and to compute the clipped loss with grad; the global grad/inference-mode state is part of every guard set, so the same forward compiles once per mode. From pytorch/pytorch#123784 (recompile on `___check_global_state()` after switching inference_mode)."""
from __future__ import annotations

import torch
from torch import nn
from torch.distributions import Categorical

LABEL = "grad-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/123784"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int = 8, n_actions: int = 4) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh())
        self.actor = nn.Linear(8, n_actions)
        self.critic = nn.Linear(8, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(obs)
        return self.actor(h), self.critic(h).squeeze(-1)


def build() -> nn.Module:
    return ActorCritic()


def _collect(agent: nn.Module, obs: torch.Tensor) -> dict[str, torch.Tensor]:
    with torch.inference_mode():
        logits, value = agent(obs)
        dist = Categorical(logits=logits)
        action = dist.sample()
        rollout = {"obs": obs, "action": action, "logp": dist.log_prob(action), "value": value}
    return {k: v.clone() for k, v in rollout.items()}  # out of inference mode: normal tensors for the update


def step(model: nn.Module, i: int) -> None:
    batch = _collect(model, torch.randn(16, 8))
    advantages = torch.randn(16)
    returns = batch["value"] + advantages
    logits, value = model(batch["obs"])
    new_logp = Categorical(logits=logits).log_prob(batch["action"])
    ratio = (new_logp - batch["logp"]).exp()
    pg = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
    (pg + 0.5 * (value - returns).pow(2).mean()).backward()
