"""Hazard: the whole ACT policy is compiled, and its `forward` builds the loss dict for logging with `.item()` (`loss_dict["l1_loss"] = l1_loss.item()`, `loss_dict["kld_loss"] = mean_kld.item()`), a host sync Dynamo cannot put in the graph, so every training step breaks the graph in the compiled region. From huggingface/lerobot#3061 (ACT torch.compile support: it works "because all `.item()` calls ... live in `ACTPolicy` (which stays uncompiled), while `ACT.forward()` is pure tensor computation")."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/lerobot/pull/3061"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 3}


class ACT(nn.Module):
    """The inner model: a CVAE-style encoder and an action-chunk decoder (pure tensor code)."""

    def __init__(self, obs_dim: int = 8, action_dim: int = 4, chunk: int = 3, latent: int = 4) -> None:
        super().__init__()
        self.chunk, self.action_dim = chunk, action_dim
        self.vae_encoder = nn.Linear(obs_dim + chunk * action_dim, 2 * latent)
        self.decoder = nn.Sequential(nn.Linear(obs_dim + latent, 16), nn.ReLU(), nn.Linear(16, chunk * action_dim))

    def forward(self, obs: torch.Tensor, actions: torch.Tensor):
        mu, log_sigma_x2 = self.vae_encoder(torch.cat([obs, actions.flatten(1)], 1)).chunk(2, -1)
        z = mu + (0.5 * log_sigma_x2).exp() * torch.randn_like(mu)
        pred = self.decoder(torch.cat([obs, z], 1)).view(-1, self.chunk, self.action_dim)
        return pred, (mu, log_sigma_x2)


class ACTPolicy(nn.Module):
    def __init__(self, use_vae: bool = True, kl_weight: float = 10.0) -> None:
        super().__init__()
        self.use_vae = use_vae
        self.kl_weight = kl_weight
        self.model = ACT()

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        actions_hat, (mu, log_sigma_x2) = self.model(batch["observation.state"], batch["action"])
        l1_loss = F.l1_loss(batch["action"], actions_hat)
        loss_dict = {"l1_loss": l1_loss.item()}
        if self.use_vae:
            mean_kld = (-0.5 * (1 + log_sigma_x2 - mu.pow(2) - log_sigma_x2.exp())).sum(-1).mean()
            loss_dict["kld_loss"] = mean_kld.item()
            loss = l1_loss + mean_kld * self.kl_weight
        else:
            loss = l1_loss
        return loss, loss_dict


def build() -> nn.Module:
    return ACTPolicy()


def step(model: nn.Module, i: int) -> None:
    batch = {"observation.state": torch.randn(2, 8), "action": torch.randn(2, 3, 4)}
    loss, loss_dict = model(batch)
    loss.backward()
    _ = dict(loss_dict)  # the training script logs the floats
