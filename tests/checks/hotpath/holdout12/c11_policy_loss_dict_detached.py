"""Clean: the fixed ACT-style policy returns its loss terms as detached tensors in the loss dict (the logger and callbacks accept tensors), so the compiled training step never calls `.item()` and compiles once with no break. Look-alike of h21, from open-edge-platform/physical-ai-studio#877 (the fix)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_b import PolicyModel, l1_and_kl

LABEL = None
SOURCE = "https://github.com/open-edge-platform/physical-ai-studio/pull/877"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ACT(PolicyModel):
    def __init__(self, state_dim: int = 8, chunk: int = 4, latent: int = 4, kl_weight: float = 10.0) -> None:
        super().__init__()
        self.chunk = chunk
        self.kl_weight = kl_weight
        self.vae_encoder = nn.Linear(state_dim, 2 * latent)
        self.decoder = nn.Linear(state_dim + latent, state_dim * chunk)

    def _run(self, batch):
        state = batch["observation.state"]
        mu, log_sigma_x2 = self.vae_encoder(state).chunk(2, dim=-1)
        z = mu + (0.5 * log_sigma_x2).exp() * torch.randn_like(mu)
        actions_hat = self.decoder(torch.cat([state, z], dim=-1)).view(state.shape[0], self.chunk, -1)
        return actions_hat, mu, log_sigma_x2

    def predict_action_chunk(self, batch):
        return self._run(batch)[0]

    def compute_loss(self, batch):
        actions_hat, mu, log_sigma_x2 = self._run(batch)
        l1, kl = l1_and_kl(actions_hat, batch["action"], mu, log_sigma_x2)
        loss_dict = {"l1_loss": l1.detach(), "kld_loss": kl.detach()}
        loss = l1 + kl * self.kl_weight
        loss_dict["loss"] = loss.detach()
        return loss, loss_dict


def build() -> nn.Module:
    return ACT()


_OPT: dict[int, torch.optim.Optimizer] = {}


def step(model: nn.Module, i: int) -> None:
    """One Lightning training_step: forward the policy, log the floats, backward, optimizer step."""
    model.train()
    opt = _OPT.setdefault(id(model), torch.optim.AdamW(model.parameters(), lr=1e-4))
    batch = {"observation.state": torch.randn(2, 8), "action": torch.randn(2, 4, 8)}
    loss, loss_dict = model(batch)
    _ = {f"train/{k}": v for k, v in loss_dict.items()}  # self.log_dict(...)
    loss.backward()
    opt.step()
    opt.zero_grad()
