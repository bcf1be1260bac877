"""Hazard: LeRobot's `ACTPolicy.forward` builds its `loss_dict` with `l1_loss.item()` and `mean_kld.item()` for logging, inside the forward that `torch.compile` wraps; each `Tensor.item()` is a graph break, so every training step splits the compiled policy. From huggingface/lerobot#2159 (make ACT policy compatible with torch.compile)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/lerobot/pull/2159"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 3}


class ACT(nn.Module):
    def __init__(self, state_dim: int = 8, action_dim: int = 8, latent_dim: int = 4) -> None:
        super().__init__()
        self.vae_encoder = nn.Linear(state_dim + action_dim, 2 * latent_dim)
        self.decoder = nn.Sequential(nn.Linear(state_dim + latent_dim, 8), nn.ReLU(), nn.Linear(8, action_dim))

    def forward(self, batch: dict[str, torch.Tensor]):
        mu, log_sigma_x2 = self.vae_encoder(torch.cat([batch["observation.state"], batch["action"]], -1)).chunk(2, -1)
        latent = mu + torch.randn_like(mu) * (0.5 * log_sigma_x2).exp()
        actions_hat = self.decoder(torch.cat([batch["observation.state"], latent], -1))
        return actions_hat, (mu, log_sigma_x2)


class ACTPolicy(nn.Module):
    def __init__(self, kl_weight: float = 10.0) -> None:
        super().__init__()
        self.kl_weight = kl_weight
        self.model = ACT()

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        actions_hat, (mu_hat, log_sigma_x2_hat) = self.model(batch)
        l1_loss = (F.l1_loss(batch["action"], actions_hat, reduction="none") * ~batch["action_is_pad"].unsqueeze(-1)).mean()
        loss_dict = {"l1_loss": l1_loss.item()}
        mean_kld = (-0.5 * (1 + log_sigma_x2_hat - mu_hat.pow(2) - log_sigma_x2_hat.exp())).sum(-1).mean()
        loss_dict["kld_loss"] = mean_kld.item()
        loss = l1_loss + mean_kld * self.kl_weight
        return loss, loss_dict


def build() -> nn.Module:
    policy = ACTPolicy()
    policy.optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-4)  # held by the training script
    return policy


def step(model: nn.Module, i: int) -> None:
    optimizer = model.optimizer
    batch = {
        "observation.state": torch.randn(4, 8),
        "action": torch.randn(4, 8),
        "action_is_pad": torch.zeros(4, dtype=torch.bool),
    }
    loss, _ = model(batch)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
