"""Hazard: a trainer compiles the net once (`self.net = torch.compile(self.net)`) and then alternates training batches with a validation pass that calls `net.eval()` under `torch.no_grad()`; the module's training flag (and grad mode) are guarded, so the first validation batch recompiles the whole net ("it does the second compile during validation"). From Deci-AI/super-gradients#1172 (torch_compile in sg_trainer)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

LABEL = "outside"
SOURCE = "https://github.com/Deci-AI/super-gradients/pull/1172"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class ConvBNAct(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn(self.conv(x)))


class ResNetTiny(nn.Module):
    def __init__(self, num_classes: int = 4) -> None:
        super().__init__()
        self.stem = ConvBNAct(3, 8)
        self.stage = ConvBNAct(8, 8)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(8, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stage(self.stem(x))
        return self.head(self.dropout(x.mean((2, 3))))


class Trainer:
    """sg_trainer.Trainer, reduced: train_epoch over batches, then _validate_epoch every `run_validation_freq`."""

    def __init__(self, net: nn.Module, run_validation_freq: int = 3) -> None:
        self.net = net
        self.run_validation_freq = run_validation_freq
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def train_batch(self, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        self.net.train()
        loss = F.cross_entropy(self.net(inputs), targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def validate_batch(self, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        self.net.eval()
        with torch.no_grad():
            F.cross_entropy(self.net(inputs), targets)


_TRAINERS: dict[int, Trainer] = {}


def build() -> nn.Module:
    return ResNetTiny()


def step(model: nn.Module, i: int) -> None:
    trainer = _TRAINERS.setdefault(id(model), Trainer(model))
    inputs, targets = torch.randn(2, 3, 8, 8), torch.tensor([0, 3])
    if i % trainer.run_validation_freq == trainer.run_validation_freq - 1:
        trainer.validate_batch(inputs, targets)
    else:
        trainer.train_batch(inputs, targets)
