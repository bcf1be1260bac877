"""Hazard: a Trainer-style loop runs evaluation every few optimizer steps, calling `model.eval()` then `model.train()` on the compiled model; the forward branches on `self.training` (dropout), which Dynamo must guard (the report was that flipping `training` failed to recompile and reused the training graph; fixed torch guards it), so the first evaluation recompiles the forward. From pytorch/pytorch#105653 (changed nn.Module.training does not trigger recompilation)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/105653"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self, dim: int = 8, n_classes: int = 4) -> None:
        super().__init__()
        self.encoder = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.encoder(x))
        if self.training:
            h = self.dropout(h)
        return self.head(h)


class Trainer:
    def __init__(self, model: nn.Module, eval_steps: int = 2) -> None:
        self.model = model
        self.eval_steps = eval_steps
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.global_step = 0

    def training_step(self) -> None:
        self.model.train()
        loss = F.cross_entropy(self.model(torch.randn(4, 8)), torch.randint(0, 4, (4,)))
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.global_step += 1

    def evaluate(self) -> None:
        self.model.eval()
        with torch.no_grad():
            self.model(torch.randn(4, 8))


_TRAINERS: dict[int, Trainer] = {}


def build() -> nn.Module:
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    trainer = _TRAINERS.get(id(model))
    if trainer is None or trainer.model is not model:
        trainer = _TRAINERS[id(model)] = Trainer(model)
    trainer.training_step()
    if trainer.global_step % trainer.eval_steps == 0:
        trainer.evaluate()
