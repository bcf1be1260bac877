"""Hazard: a compiled LightningModule calls `self.log("val_loss", loss, on_epoch=True)` in `validation_step`; the call reaches the trainer's `_ResultCollection`, which creates the metric entry on the first batch and then bumps its Python `cumulated_batch_size` each batch from inside the compiled step, so the step is guarded on the collection's Python state (and on the int `batch_idx` the loop passes) and recompiles while the epoch accumulates. From Lightning-AI/pytorch-lightning#17929 (self.log when model is compiled does not accumulate the metrics)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import _Trainer

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17929"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class LightningModule(nn.Module):
    """The parts of `lightning.pytorch.LightningModule` that `self.log` goes through."""

    _current_fx_name = "validation_step"

    @property
    def trainer(self) -> _Trainer:
        return self._trainer

    def log(self, name: str, value: torch.Tensor, prog_bar: bool = False, on_epoch: bool = True, batch_size: int = 1):
        results = self.trainer._results
        results.batch_idx = self._batch_idx
        results.log(self._current_fx_name, name, value, on_epoch=on_epoch, batch_size=batch_size)


class LitRegressor(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("val_loss", loss, prog_bar=True, on_epoch=True, batch_size=x.shape[0])
        return loss

    def forward(self, batch, batch_idx):
        # what the strategy's forward redirection does for a compiled module: route the step through forward
        self._batch_idx = batch_idx
        return self.validation_step(batch, batch_idx)


def build() -> nn.Module:
    model = LitRegressor()
    model._trainer = _Trainer()
    return model


def step(model: nn.Module, i: int) -> None:
    batch = (torch.randn(4, 8), torch.randn(4, 1))
    with torch.no_grad():
        model(batch, i % 4)
    if i % 4 == 3:  # validation epoch end: the logger connector reads and resets the collection
        model.trainer.callback_metrics.update(model.trainer._results.epoch_end())
        model.trainer._results.clear()
