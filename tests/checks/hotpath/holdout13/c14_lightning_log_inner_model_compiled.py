"""Clean: the same LightningModule and `self.log("train_loss", loss)` in `training_step`, but only the inner network (`self.model`) is compiled, as Lightning's docs advise, so the compile-disabled result-collection logging runs in eager Python outside the compiled region. From Lightning-AI/pytorch-lightning#18835."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import LightningModuleBase, _LightningModuleWrapperBase, _Trainer

LABEL = None
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/18835"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "_forward_module.model"


class RegressorNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.hidden(x)))


class LitRegressor(LightningModuleBase):
    def __init__(self) -> None:
        super().__init__()
        self.model = RegressorNet()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = F.mse_loss(self.model(x), y)
        self.log("train_loss", loss, prog_bar=True, batch_size=x.shape[0])
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def build() -> nn.Module:
    lit = LitRegressor()
    lit._trainer = _Trainer()
    lit._current_fx_name = "training_step"
    wrapper = _LightningModuleWrapperBase(lit)
    wrapper._optimizer = lit.configure_optimizers()
    return wrapper


def step(model: nn.Module, i: int) -> None:
    # the fit loop's automatic optimization for one batch
    batch = (torch.randn(4, 8), torch.randn(4, 1))
    loss = model(batch, i)
    loss.backward()
    model._optimizer.step()
    model._optimizer.zero_grad()
    model._forward_module.trainer.global_step += 1
