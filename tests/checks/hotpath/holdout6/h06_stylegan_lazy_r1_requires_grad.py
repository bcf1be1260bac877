"""Hazard: a StyleGAN2-style training loop applies lazy R1 regularisation every `d_reg_every` iterations by calling
`real_img.requires_grad_(True)` before the discriminator; the compiled discriminator guards on the input's
requires_grad flag, so the first regularisation step fails the guard and compiles a second graph (and the flag keeps
alternating between the two cached entries). From pytorch/pytorch#131975 (torch.compile recompiles when an input's
`.requires_grad` flips)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "requires-grad"
SOURCE = "https://github.com/pytorch/pytorch/issues/131975"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "discriminator"


class Discriminator(nn.Module):
    def __init__(self, channels: int = 3, width: int = 8) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(channels, width, 3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(width, width, 3, stride=2, padding=1),
            nn.LeakyReLU(0.2),
        )
        self.final_linear = nn.Linear(width * 4 * 4, 1)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        return self.final_linear(self.convs(img).flatten(1))


class GAN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(8, 3 * 8 * 8), nn.Tanh())
        self.discriminator = Discriminator()


def d_r1_loss(real_pred: torch.Tensor, real_img: torch.Tensor) -> torch.Tensor:
    (grad_real,) = torch.autograd.grad(real_pred.sum(), real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


D_REG_EVERY = 4
R1 = 10.0


def step(gan: nn.Module, i: int) -> None:
    real_img = torch.randn(2, 3, 8, 8)
    fake_img = gan.generator(torch.randn(2, 8)).view(2, 3, 8, 8)
    fake_pred = gan.discriminator(fake_img.detach())
    real_pred = gan.discriminator(real_img)
    (F.softplus(fake_pred) + F.softplus(-real_pred)).mean().backward()

    if i % D_REG_EVERY == 0:  # lazy R1 regularisation
        real_img.requires_grad_(True)
        real_pred = gan.discriminator(real_img)
        r1_loss = d_r1_loss(real_pred, real_img)
        (R1 / 2 * r1_loss * D_REG_EVERY + 0 * real_pred[0]).sum().backward()


def build() -> nn.Module:
    return GAN()
