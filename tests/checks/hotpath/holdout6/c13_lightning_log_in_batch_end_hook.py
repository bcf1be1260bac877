"""Clean: the same compiled LightningModule, but `training_step` returns the loss in its output dict and the
`self.log` call lives in `on_train_batch_end`, which the fit loop calls after the compiled step returns, so the
compiler-disabled log is never reached from inside the compiled frame; it compiles once with no break. Look-alike of
the hazard in Lightning-AI/pytorch-lightning#21837 (LightningModule.log under torch.compile)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import LightningModule, _LightningModuleWrapperBase, _TrainerState

LABEL = None
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/pull/21837"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LitClassifier(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return {"loss": loss}

    def on_train_batch_end(self, outputs: dict[str, torch.Tensor], batch: tuple[torch.Tensor, torch.Tensor],
                           batch_idx: int) -> None:
        self.log("train_loss", outputs["loss"], prog_bar=True, on_step=True, on_epoch=True, batch_size=batch[0].size(0))


def build() -> nn.Module:
    module = LitClassifier()
    module._trainer = _TrainerState()
    module._optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    return _LightningModuleWrapperBase(module)


def step(model: nn.Module, i: int) -> None:
    lit = model._forward_module
    batch = (torch.randn(4, 8), torch.randint(0, 4, (4,)))
    outputs = model(batch, i)  # strategy.training_step -> wrapper.forward -> lit.training_step (compiled)
    lit._optimizer.zero_grad()
    outputs["loss"].backward()
    lit._optimizer.step()
    lit.on_train_batch_end(outputs, batch, i)  # fit loop hook, eager
    lit.trainer.global_step += 1
