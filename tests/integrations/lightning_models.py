"""A small LightningModule and the data the adapter tests fit it on: batches whose sequence length changes at a known
step, so the region recompiles there (the storm a `fail` breach must stop)."""

from __future__ import annotations

import lightning.pytorch as L
import torch
from torch import nn

WIDTH = 8


class Block(nn.Module):
    """The region: one linear layer and an activation (no hazard of its own)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.lin(x))


class Tiny(L.LightningModule):
    """Two blocks and a head; counts its training and validation steps (what a refusal must keep at zero) in
    Lightning's batch-end hooks, outside the step methods an engine may compile."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Block() for _ in range(2))
        self.head = nn.Linear(WIDTH, 1)
        self.train_steps = 0
        self.val_steps = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x).mean()

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        return self(batch) ** 2

    def validation_step(self, batch: torch.Tensor, batch_idx: int) -> None:
        self(batch)

    def on_train_batch_end(self, outputs: object, batch: torch.Tensor, batch_idx: int) -> None:
        self.train_steps += 1

    def on_validation_batch_end(
        self, outputs: object, batch: torch.Tensor, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self.val_steps += 1

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def batches(lengths: list[int], batch: int = 2) -> list[torch.Tensor]:
    """One tensor per step, shaped (batch, length, WIDTH): a new length is a new shape for the compiled region."""
    g = torch.Generator().manual_seed(0)
    return [torch.randn(batch, n, WIDTH, generator=g) for n in lengths]


def loader(lengths: list[int]) -> torch.utils.data.DataLoader:
    """A DataLoader yielding the prepared batches as they are (batch_size=None: no collation)."""
    return torch.utils.data.DataLoader(batches(lengths), batch_size=None)


def trainer(callbacks: list, **kw: object) -> L.Trainer:
    """A quiet CPU trainer: no logger, checkpoint, progress bar or summary."""
    base: dict[str, object] = {
        "accelerator": "cpu",
        "devices": 1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
    }
    return L.Trainer(callbacks=callbacks, **{**base, **kw})
