"""Hazard: a compiled LightningModule calls `self.log("train_loss", loss)` inside `training_step`; since Lightning made
`LightningModule.log` (and `_ResultCollection.log`) `@torch.compiler.disable` to stop Dynamo crashing on torch 2.12+,
every compiled step graph-breaks at the log call and resumes in a second frame. From
Lightning-AI/pytorch-lightning#21837 (disable compile tracing at the LightningModule.log boundary)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import LightningModule, _LightningModuleWrapperBase, _TrainerState

LABEL = "graph-break"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/pull/21837"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class LitClassifier(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True, batch_size=x.size(0))
        return loss


def build() -> nn.Module:
    module = LitClassifier()
    module._trainer = _TrainerState()
    module._optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    return _LightningModuleWrapperBase(module)


def step(model: nn.Module, i: int) -> None:
    lit = model._forward_module
    batch = (torch.randn(4, 8), torch.randint(0, 4, (4,)))
    loss = model(batch, i)  # strategy.training_step -> wrapper.forward -> lit.training_step
    lit._optimizer.zero_grad()
    loss.backward()
    lit._optimizer.step()
    lit.trainer.global_step += 1
