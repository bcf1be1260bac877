"""Hazard: a forward tracker (FSDP-style pre-forward bookkeeping) registers a pre-hook on a compiled encoder-decoder model and the hook logs through `logging`, which Dynamo cannot trace; the break in the pre-hook splits the model call so the forward is compiled apart from the hook. From pytorch/pytorch#111966 (graph break in forward pre-hook skips compiling forward for nn.Transformer)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import ForwardTracker

LABEL = "pre-hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/111966"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class TinyTransformer(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.encoder = nn.Linear(d_model, d_model)
        self.decoder = nn.Linear(d_model, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        memory = self.norm(torch.relu(self.encoder(src)))
        attn = torch.softmax(tgt @ memory.transpose(-1, -2), dim=-1)
        return self.decoder(attn @ memory)


TRACKER = ForwardTracker()


def build() -> nn.Module:
    model = TinyTransformer()
    TRACKER.attach(model)
    return model


def step(model: nn.Module, i: int) -> None:
    src, tgt = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
    model(src, tgt).sum().backward()
