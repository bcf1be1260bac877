"""Hazard: forward caches its rotary frequency table on self (`self._freqs_cache = (key, freqs)`) the first time it runs, so the second call sees different state. From huggingface/diffusers#13792: [AnyFlow] FAR: standalone causal-mask builder + torch.compile follow-up ("mutating self._freqs_cache between calls becomes a Dynamo guard and forces recompilation on the second invocation")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/huggingface/diffusers/pull/13792"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class RotaryBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self._freqs_cache = None

    def _build_freqs(self, device: torch.device) -> torch.Tensor:
        cache_key = (device.type, str(device))
        if self._freqs_cache is not None and self._freqs_cache[0] == cache_key:
            return self._freqs_cache[1]
        freqs = 1.0 / (10000 ** (torch.arange(0, 8, device=device, dtype=torch.float32) / 8))
        self._freqs_cache = (cache_key, freqs)
        return freqs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * torch.cos(self._build_freqs(x.device))


def build() -> nn.Module:
    return RotaryBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
