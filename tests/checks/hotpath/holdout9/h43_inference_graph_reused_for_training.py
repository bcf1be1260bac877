"""Hazard: a trainer runs a sanity-check validation pass under `torch.no_grad()` before training, then trains the same compiled model; the grad mode and the parameters' autograd state are part of the guards, so the first training step recompiles and the loop then alternates between an inference graph and a training graph. From pytorch/pytorch#100977 (torch.compile can re-use an inference graph when it should run autograd; fixed by guarding on grad mode)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/100977"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


class Trainer:
    """Sanity-check validation before the first step, then validation every `val_check_interval` steps."""

    val_check_interval = 3

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def validation_step(self) -> None:
        with torch.no_grad():
            self.model(torch.randn(4, 8))

    def training_step(self) -> None:
        loss = nn.functional.cross_entropy(self.model(torch.randn(4, 8)), torch.randint(0, 3, (4,)))
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()


def build() -> nn.Module:
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    trainer = Trainer(model)
    if i % Trainer.val_check_interval == 0:
        trainer.validation_step()
    else:
        trainer.training_step()
