"""CC305: `0.0 in attention_mask` asks a tensor for a Python bool (transformers' flash-attention mask check): a
data-dependent branch. The parameter is known to be a tensor from its annotation; `x in self.names` on a tuple is
not reported."""
from __future__ import annotations

import torch
from torch import nn


class Model(nn.Module):
    names = ("flash", "sdpa")

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.impl = "flash"

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.impl in self.names and attention_mask is not None and 0.0 in attention_mask:  # expect: CC305 warning
            x = x * attention_mask[..., None]
        return self.proj(x)


def build() -> nn.Module:
    return Model()
