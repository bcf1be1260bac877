"""Clean: the KL warm-up reads the epoch from a registered buffer that an epoch-start callback fills in place, instead of the trainer's Python `current_epoch`, so advancing epochs does not recompile the compiled module. Look-alike of Lightning-AI/pytorch-lightning#17933."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17933"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class VAEModule(nn.Module):
    def __init__(self, warmup_epochs: int = 4) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 8)
        self.dec = nn.Linear(4, 8)
        self.warmup_epochs = warmup_epochs
        self.register_buffer("epoch", torch.zeros(()), persistent=False)

    def on_train_epoch_start(self, current_epoch: int) -> None:
        self.epoch.fill_(current_epoch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = nn.functional.mse_loss(self.dec(z), x)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).mean()
        beta = ((self.epoch + 1) / self.warmup_epochs).clamp(max=1.0)
        return recon + beta * kl


def build() -> nn.Module:
    return VAEModule()


def step(model: nn.Module, i: int) -> None:
    model.on_train_epoch_start(i)
    with torch.no_grad():
        model(torch.randn(4, 8))
