"""Hazard: a Lightning `BackboneFinetuning`-style callback keeps the backbone frozen for the first epochs and unfreezes it (flips `requires_grad` on its parameters) at `unfreeze_backbone_at_epoch`, while the model was compiled with the backbone frozen; on torch 2.13 the parameters' requires_grad is guarded, so the unfreeze recompiles the model (the report saw the frozen graph silently reused). From pytorch/pytorch#139476 (dynamo re-uses incorrect compiled frame when changing requires-gradness of model params)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "requires-grad"
SOURCE = "https://github.com/pytorch/pytorch/issues/139476"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # measured on the H100 machine


class BackboneFinetuning:
    """lightning.pytorch.callbacks.BackboneFinetuning, reduced to freeze_before_training / finetune_function."""

    def __init__(self, unfreeze_backbone_at_epoch: int = 2) -> None:
        self.unfreeze_backbone_at_epoch = unfreeze_backbone_at_epoch

    @staticmethod
    def make_trainable(module: nn.Module) -> None:
        for param in module.parameters():
            param.requires_grad = True

    @staticmethod
    def freeze(module: nn.Module) -> None:
        for param in module.parameters():
            param.requires_grad = False

    def freeze_before_training(self, pl_module: nn.Module) -> None:
        self.freeze(pl_module.backbone)

    def finetune_function(self, pl_module: nn.Module, epoch: int) -> None:
        if epoch == self.unfreeze_backbone_at_epoch:
            self.make_trainable(pl_module.backbone)


class Backbone(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(torch.relu(self.conv(x)).flatten(1)))


class LitClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


_callbacks: dict[int, BackboneFinetuning] = {}
STEPS_PER_EPOCH = 2


def build() -> nn.Module:
    model = LitClassifier()
    callback = BackboneFinetuning(unfreeze_backbone_at_epoch=2)
    callback.freeze_before_training(model)  # on_fit_start
    _callbacks[id(model)] = callback
    return model


def step(model: nn.Module, i: int) -> None:
    if i % STEPS_PER_EPOCH == 0:  # on_train_epoch_start
        _callbacks[id(model)].finetune_function(model, i // STEPS_PER_EPOCH)
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 3, (4,))
    nn.functional.cross_entropy(model(x), y).backward()
