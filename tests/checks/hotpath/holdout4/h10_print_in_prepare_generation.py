"""Hazard: the compiled `_prepare_generation` prints a progress line on every call (the byte encoding of the prompt already runs outside), and `print` is a graph break that splits the function into a resumed frame, from nari-labs/dia#165 (Reduce recompilation of `_prepare_generation` through more graph break fixes)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/nari-labs/dia/pull/165"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class DiaPrepare(nn.Module):
    def __init__(self, verbose: bool = True) -> None:
        super().__init__()
        self.text_embed = nn.Embedding(256, 8)
        self.encoder = nn.Linear(8, 8)
        self.verbose = verbose

    def forward(self, text_ids: torch.Tensor) -> torch.Tensor:
        if self.verbose:
            print(f"generate: preparing {text_ids.shape[1]} text tokens")
        return self.encoder(self.text_embed(text_ids))


def build() -> nn.Module:
    return DiaPrepare()


def step(model: nn.Module, i: int) -> None:
    text = "[S1] Dia is an open weights text to dialogue model. [S2] You get full control."
    ids = torch.tensor([list(text.encode("utf-8").replace(b"[S1]", b"\x01").replace(b"[S2]", b"\x02"))[:12]])
    with torch.no_grad():
        model(ids)
