"""Hazard: SGLang's diffusion FLUX attention asks `current_platform.is_amp_supported()` (an `lru_cache`d method on the platform singleton) and logs a "FlashInfer not available" warning inside the compiled forward, so every denoising step breaks the graph at the logger call (torch 2.13 traces through the `lru_cache` wrapper, with a warning, instead of breaking there). From sgl-project/sglang#23648 ([diffusion] model: Fix FLUX.1/2 graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11 import _helpers_c as platforms
from tests.checks.hotpath.holdout11._helpers_c import current_platform, warn_flashinfer_missing_once

LABEL = "graph-break"
SOURCE = "https://github.com/sgl-project/sglang/pull/23648"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


class FluxAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.to_out = nn.Linear(dim, dim)

    def _attn(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if not platforms.FLASHINFER_AVAILABLE:
            warn_flashinfer_missing_once()
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if current_platform.is_amp_supported():
            with torch.autocast(current_platform.device_name, dtype=torch.bfloat16):
                out = self._attn(q, k, v)
        else:
            out = self._attn(q, k, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d).float())


class FluxTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = FluxAttention(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm(x))
        return x + self.ff(x)


def build() -> nn.Module:
    return FluxTransformerBlock()


def step(model: nn.Module, i: int) -> None:  # one denoising step of the DenoisingStage
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
