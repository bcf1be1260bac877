"""Clean: the same MONAI-style supervised training loop, but `prepare_batch` converts the MetaTensors to plain `torch.Tensor`s before they reach the compiled network (the metadata stays with the batch dict for the post-transforms), so the compiled forward only sees ordinary tensors. From Project-MONAI/MONAI#7375 (when `compile=True`, the trainer and evaluator "Convert to `torch.Tensor` internally")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import ImageLoader, MetaTensor

LABEL = None
SOURCE = "https://github.com/Project-MONAI/MONAI/pull/7375"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TinyUNet(nn.Module):
    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.down = nn.Conv3d(1, channels, 3, padding=1)
        self.act = nn.PReLU()
        self.up = nn.Conv3d(channels, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.act(self.down(x)))


class SupervisedTrainer:
    def __init__(self, compile: bool = True) -> None:
        self.loader = ImageLoader()
        self.loss_function = nn.MSELoss()
        self.compile = compile

    def prepare_batch(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        inputs, targets = batch["image"], batch["label"]
        if self.compile:
            if isinstance(inputs, MetaTensor):
                inputs = inputs.as_tensor()
            if isinstance(targets, MetaTensor):
                targets = targets.as_tensor()
        return inputs, targets

    def iteration(self, network: nn.Module, i: int) -> torch.Tensor:
        inputs, targets = self.prepare_batch(self.loader[i])
        loss = self.loss_function(network(inputs), targets)
        loss.backward()
        return loss


_trainer = SupervisedTrainer(compile=True)


def build() -> nn.Module:
    return TinyUNet()


def step(model: nn.Module, i: int) -> None:
    _trainer.iteration(model, i)
