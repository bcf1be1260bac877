"""Hazard: the compiled LightningModule reads `self.current_epoch`, a property reaching into the trainer's fit-loop progress that the loop advances every epoch, to drive a KL warm-up, so the compiled frame guards on the epoch and recompiles as it changes (on torch 2.0 it silently stayed 0). From Lightning-AI/pytorch-lightning#17933 ('self.current_epoch' always returns 0 when compiling)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17933"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


@dataclass
class _Progress:
    current: int = 0


@dataclass
class _FitLoop:
    epoch_progress: _Progress = field(default_factory=_Progress)


@dataclass
class _Trainer:
    fit_loop: _FitLoop = field(default_factory=_FitLoop)


class VAEModule(nn.Module):
    def __init__(self, warmup_epochs: int = 4) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 8)
        self.dec = nn.Linear(4, 8)
        self.warmup_epochs = warmup_epochs
        self._trainer = _Trainer()

    @property
    def current_epoch(self) -> int:
        return self._trainer.fit_loop.epoch_progress.current if self._trainer else 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = nn.functional.mse_loss(self.dec(z), x)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).mean()
        beta = min(1.0, (self.current_epoch + 1) / self.warmup_epochs)
        return recon + beta * kl


def build() -> nn.Module:
    return VAEModule()


def step(model: nn.Module, i: int) -> None:
    model._trainer.fit_loop.epoch_progress.current = i  # one batch per epoch in this reduced loop
    with torch.no_grad():
        model(torch.randn(4, 8))
