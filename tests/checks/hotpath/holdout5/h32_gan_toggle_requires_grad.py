"""Hazard: a Lightning-style GAN loop toggles the discriminator's parameters' requires_grad between the generator and discriminator optimisation steps (toggle_optimizer), and the compiled discriminator recompiles for the flipped grad state. From Lightning-AI/pytorch-lightning#21513 (torch.compile doesn't work with self.toggle_optimizer() in lightning module)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/21513"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "discriminator"


class Discriminator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.leaky_relu(self.fc1(x), 0.2))


class GAN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.discriminator = Discriminator()
        self.opt_g = torch.optim.SGD(self.generator.parameters(), lr=1e-2)
        self.opt_d = torch.optim.SGD(self.discriminator.parameters(), lr=1e-2)

    def toggle_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        """Freeze every parameter not owned by `optimizer` (what LightningModule.toggle_optimizer does)."""
        owned = {id(p) for group in optimizer.param_groups for p in group["params"]}
        for p in self.parameters():
            p.requires_grad = id(p) in owned


def build() -> nn.Module:
    return GAN()


def step(model: nn.Module, i: int) -> None:
    z = torch.randn(4, 4)
    real = torch.randn(4, 8)
    bce = nn.functional.binary_cross_entropy_with_logits
    # generator step: discriminator frozen
    model.toggle_optimizer(model.opt_g)
    fake = model.generator(z)
    g_loss = bce(model.discriminator(fake), torch.ones(4, 1))
    model.opt_g.zero_grad()
    g_loss.backward()
    model.opt_g.step()
    # discriminator step: discriminator trainable again
    model.toggle_optimizer(model.opt_d)
    d_loss = bce(model.discriminator(real), torch.ones(4, 1)) + bce(model.discriminator(fake.detach()), torch.zeros(4, 1))
    model.opt_d.zero_grad()
    d_loss.backward()
    model.opt_d.step()
