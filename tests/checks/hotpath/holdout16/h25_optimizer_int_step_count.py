"""Hazard: the optimizer update is compiled on its own (the fused per-tensor helper that timm's optimizers share), and the step count lives in the optimizer as a Python int: `step += 1` inside the compiled update, then `1 - beta1 ** step` for bias correction. Each training step hands Dynamo a new integer constant, so the update is traced again at every step (the int attribute is never made dynamic: 8 steps, 8 compiles, then the recompile limit). From huggingface/pytorch-image-models#2704 ("Support better torch.compile use by using torch.tensor for step count")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import CompiledUpdate

LABEL = "counter"
SOURCE = "https://github.com/huggingface/pytorch-image-models/pull/2704"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
REGION = "update"


class TrainState(nn.Module):
    def __init__(self, tensor_step: bool = False) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
        self.update = CompiledUpdate(self.net, tensor_step=tensor_step)


def build() -> nn.Module:
    return TrainState(tensor_step=False)


def step(model: nn.Module, i: int) -> None:
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    model.net.zero_grad(set_to_none=False)
    nn.functional.cross_entropy(model.net(x), y).backward()
    model.update()
