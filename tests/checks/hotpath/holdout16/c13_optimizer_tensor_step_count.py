"""Clean: the same compiled optimizer update, but the step count is kept as a 0-d tensor (`state['step'] = torch.tensor(0.)`, incremented in place) so `1 - beta1 ** step` is graph arithmetic on a tensor and the update is traced once for every step. The fix of huggingface/pytorch-image-models#2704 (torch.tensor step count for torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16.h25_optimizer_int_step_count import TrainState

LABEL = None
SOURCE = "https://github.com/huggingface/pytorch-image-models/pull/2704"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "update"


def build() -> nn.Module:
    return TrainState(tensor_step=True)


def step(model: nn.Module, i: int) -> None:
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    model.net.zero_grad(set_to_none=False)
    nn.functional.cross_entropy(model.net(x), y).backward()
    model.update()
