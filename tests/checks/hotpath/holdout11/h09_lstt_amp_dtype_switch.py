"""Hazard: a long-short-term transformer layer (video object segmentation) is compiled and fed the reference frame's embedding in float32 while later frames' embeddings come out of an autocast region in bfloat16; the tensor dtype guard fails on the first half-precision frame and the layer recompiles. From pytorch/pytorch#128134 (AMP guards recompilation `dtype mismatch. expected Half, actual Float`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "dtype"
SOURCE = "https://github.com/pytorch/pytorch/issues/128134"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "lstt"


class LongShortTermLayer(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.d_model = d_model
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = nn.MultiheadAttention(d_model, num_heads=2)
        self.linear_QV = nn.Linear(d_model, 2 * d_model)

    def forward(self, tgt: torch.Tensor, long_term_memory: torch.Tensor) -> torch.Tensor:
        _tgt = self.norm1(tgt)
        tgt2 = self.self_attn(_tgt, _tgt, _tgt)[0]
        tgt = tgt + tgt2
        _tgt = self.norm2(tgt)
        curr_Q, curr_V = torch.split(self.linear_QV(_tgt), self.d_model, dim=2)
        attn = torch.softmax(curr_Q @ long_term_memory.transpose(-1, -2), dim=-1)
        return tgt + attn @ curr_V


class VOSModel(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.patch_embed = nn.Linear(d_model, d_model)
        self.lstt = LongShortTermLayer(d_model)

    def forward(self, frame: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        return self.lstt(self.patch_embed(frame), memory)


def build() -> nn.Module:
    return VOSModel()


def step(model: nn.Module, i: int) -> None:
    frame = torch.randn(5, 1, 8)
    memory = torch.randn(5, 1, 8)
    with torch.no_grad():
        if i == 0:  # reference frame: embedded in full precision
            tgt = model.patch_embed(frame)
        else:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                tgt = model.patch_embed(frame)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            model.lstt(tgt, memory)
