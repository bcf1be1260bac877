"""CC310 and what the step passes: a learning rate from a helper annotated `-> float` is a Python number that
changes between calls (a recompile before it turns dynamic); a literal constant the step passes decides the
compiled code's branches (`output_attentions=True` reaches a logging call on every call: CC304); an object the
step passes is walked with it bound (a cache the compiled code grows by concatenation: CC302)."""
from __future__ import annotations

import logging
import math

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Cache:
    def __init__(self) -> None:
        self.keys = torch.zeros(1, 0, 8)

    def update(self, k: torch.Tensor) -> torch.Tensor:
        self.keys = torch.cat([self.keys, k], dim=1)  # expect: CC302 warning
        return self.keys


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.cache = Cache()

    def forward(self, x, cache, scale, output_attentions=False):
        if output_attentions:
            logger.warning("attention weights are not returned")  # expect: CC304 warning
        keys = cache.update(self.proj(x))
        return keys.mean(1) * scale


def cosine_lr(i: int, total: int = 100) -> float:
    return 0.5 * (1 + math.cos(math.pi * i / total))


def build() -> nn.Module:
    return Decoder()


def step(model, i):
    lr = cosine_lr(i)
    with torch.no_grad():
        return model(torch.randn(1, 1, 8), model.cache, lr, output_attentions=True)  # expect: CC310 warning
