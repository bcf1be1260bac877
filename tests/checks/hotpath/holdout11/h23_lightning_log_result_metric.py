"""Hazard: a compiled Lightning training step calls `self.log(f"loss/{split}", loss, on_step=True, on_epoch=True)`; the log lands in the trainer's result collection, whose per-key metric object bumps a Python `_update_count` on every call, so each step fails the guard on that counter and the step is retraced until the recompile limit. From Lightning-AI/pytorch-lightning#17140 (`LightningModule.log` failing under `torch.compile`)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tests.checks.hotpath.holdout11._helpers_b import LightningModule, Trainer, _LightningModuleWrapperBase

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17140"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, input_data: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        logits = self.head(torch.relu(self.encoder(input_data["x"])))
        return {"logits": logits, "loss": F.cross_entropy(logits, input_data["y"])}

    def __step(self, input_data, split="train", dataloader_idx=0):
        out = self(input_data)
        self.log(f"loss/{split}", out["loss"], on_step=True, on_epoch=True)
        return {"loss": out["loss"]}

    def training_step(self, batch, batch_idx, dataloader_idx=0):
        return self.__step(batch, "train", dataloader_idx=dataloader_idx)


def build() -> nn.Module:
    module = Model()
    trainer = Trainer()
    module._trainer = trainer
    module._current_fx_name = "training_step"
    return _LightningModuleWrapperBase(module)


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    batch = {"x": torch.randn(4, 8, generator=g), "y": torch.randint(0, 4, (4,), generator=g)}
    trainer = model._forward_module._trainer
    trainer._results.batch = batch["x"]  # the loop stores the current batch for batch-size extraction
    out = model(batch, i)
    out["loss"].backward()
