"""Hazard: a GGUF-quantized DiT keeps each linear's packed weight in a `quantized_weight` buffer and dequantizes it in forward; the file mixes quant types per tensor, so blocks compiled one by one (same code, `compile_dit`) see buffers of different packed widths, and each new width fails the static-shape guard on the buffer and recompiles. From numz/ComfyUI-SeedVR2_VideoUpscaler#427 (tensor 'self._buffers['quantized_weight']' size mismatch ... Guard failed on a parameter)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/numz/ComfyUI-SeedVR2_VideoUpscaler/issues/427"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "blocks.*"

DIM = 8
# bytes per row of a packed 8x8 weight: Q8_0 blocks vs Q4_K blocks vs F16 (GGUF mixes them per tensor)
PACKED_WIDTH = {"Q8_0": 10, "Q4_K": 6, "F16": 16}


class GGUFLinear(nn.Module):
    def __init__(self, qtype: str) -> None:
        super().__init__()
        self.qtype = qtype
        self.register_buffer("quantized_weight", torch.randint(0, 255, (DIM, PACKED_WIDTH[qtype]), dtype=torch.uint8))
        self.register_buffer("scale", torch.rand(DIM, 1) * 0.01)
        self.bias = nn.Parameter(torch.zeros(DIM))

    def dequantize(self) -> torch.Tensor:
        q = self.quantized_weight.float()
        # unpack to the logical (DIM, DIM) weight: repeat/trim along the packed axis, then scale
        reps = -(-DIM // q.shape[1])
        return (q.repeat(1, reps)[:, :DIM] - 128.0) * self.scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.dequantize(), self.bias)


class NaDiTBlock(nn.Module):
    def __init__(self, qtypes: tuple[str, str]) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.attn_proj = GGUFLinear(qtypes[0])
        self.mlp_proj = GGUFLinear(qtypes[1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn_proj(self.norm(x))
        return x + self.mlp_proj(torch.nn.functional.gelu(x))


class NaDiT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layout = [("Q8_0", "Q8_0"), ("Q4_K", "Q8_0"), ("Q8_0", "Q4_K"), ("F16", "Q8_0")]
        self.blocks = nn.ModuleList(NaDiTBlock(q) for q in layout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def build() -> nn.Module:
    return NaDiT().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, DIM))
