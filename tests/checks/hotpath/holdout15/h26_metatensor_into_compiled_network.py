"""Hazard: a MONAI-style supervised training loop feeds the compiled segmentation network the MetaTensors its data pipeline yields (a tensor subclass whose `__torch_function__` copies each image's metadata dict and applied-operations list onto every result), so Dynamo guards on the metadata it sees (here `x.meta['filename_or_obj']`) and recompiles for every new image. From Project-MONAI/MONAI#7375 (adding `compile` to `SupervisedTrainer`/`SupervisedEvaluator`: "Convert to `torch.Tensor` internally" before the compiled network)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import ImageLoader

LABEL = "library-object"
SOURCE = "https://github.com/Project-MONAI/MONAI/pull/7375"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class TinyUNet(nn.Module):
    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.down = nn.Conv3d(1, channels, 3, padding=1)
        self.act = nn.PReLU()
        self.up = nn.Conv3d(channels, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.act(self.down(x)))


class SupervisedTrainer:
    def __init__(self) -> None:
        self.loader = ImageLoader()
        self.loss_function = nn.MSELoss()

    def prepare_batch(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        return batch["image"], batch["label"]

    def iteration(self, network: nn.Module, i: int) -> torch.Tensor:
        inputs, targets = self.prepare_batch(self.loader[i])
        loss = self.loss_function(network(inputs), targets)
        loss.backward()
        return loss


_trainer = SupervisedTrainer()


def build() -> nn.Module:
    return TinyUNet()


def step(model: nn.Module, i: int) -> None:
    _trainer.iteration(model, i)
