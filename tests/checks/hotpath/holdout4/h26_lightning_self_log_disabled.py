"""Hazard: the compiled training step calls `self.log(...)`, which the framework marks `torch.compiler.disable` (Lightning does since it could not be traced), so every step splits the graph around the logging call. From Lightning-AI/pytorch-lightning#16822: self.log() does not work with model compiled by PyTorch 2.0 torch.compile()."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "graph-break"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/16822"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class LitAutoEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 8))
        self._logged: dict[str, torch.Tensor] = {}

    @torch.compiler.disable
    def log(self, name: str, value: torch.Tensor, on_step: bool = True) -> None:
        self._logged[name] = value.detach()

    def forward(self, batch: torch.Tensor) -> torch.Tensor:  # training_step, routed through forward
        z = self.encoder(batch)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, batch)
        self.log("train_loss", loss)
        return loss


def build() -> nn.Module:
    model = LitAutoEncoder()
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8))
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()
