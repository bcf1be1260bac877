"""Clean: the same probed ViT as h10, but the loop consumes the feature bank after every step (the probe is updated
online), so the list is empty each time the compiled forward starts and the length guard keeps holding (one compile).
Report of the hazard twin: pytorch/pytorch#93724."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_a as probing
from tests.checks.hotpath.holdout7.h10_probe_feature_bank_grows import ProbedViT

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/93724"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def build() -> nn.Module:
    probing.FEATURE_BANK.clear()
    model = ProbedViT()
    model.probe = nn.Linear(8, 3)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 5, 4)).logsumexp(-1).mean().backward()
    for _name, feats in probing.consume_features():  # online probe, outside the compiled forward
        model.probe(feats).logsumexp(-1).mean().backward()
