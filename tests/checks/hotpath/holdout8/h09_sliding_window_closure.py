"""Hazard: a long-context trainer warms up its sliding attention window by building a fresh `mask_mod` closure each step (`sliding_window(w)` captures `w`) and passing it to the compiled attention; the closure is re-created every step and Dynamo guards on what its cell holds, so every new window size fails the guard and recompiles. From pytorch/pytorch#107866 (closures reallocated on every call make the compiled frame recompile)."""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

LABEL = "closure"
SOURCE = "https://github.com/pytorch/pytorch/issues/107866"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

MaskMod = Callable[[int, int, torch.Tensor, torch.Tensor], torch.Tensor]


def sliding_window(window: int) -> MaskMod:
    def mask_mod(b: int, h: int, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    return mask_mod


class WindowedSelfAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask_mod: MaskMod) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        T = x.shape[1]
        allowed = mask_mod(0, 0, torch.arange(T).view(-1, 1), torch.arange(T).view(1, -1))
        scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        return self.proj(scores.masked_fill(~allowed, float("-inf")).softmax(-1) @ v)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.attn = WindowedSelfAttention()

    def forward(self, x: torch.Tensor, mask_mod: MaskMod) -> torch.Tensor:
        return x + self.attn(self.norm(x), mask_mod)


REGION = "attn"


def build() -> nn.Module:
    return Block()


def window_schedule(step: int, start: int = 2, final: int = 8) -> int:
    return min(final, start + step)  # grow the window by one token per step during warm-up


def step(model: nn.Module, i: int) -> None:
    mask_mod = sliding_window(window_schedule(i))
    model(torch.randn(2, 8, 8), mask_mod).sum().backward()
