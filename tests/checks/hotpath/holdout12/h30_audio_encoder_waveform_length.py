"""Hazard: a TTS server compiles the audio tokenizer's projected transformer encoder blocks and feeds each request's reference waveform at its own length, so the frame count after the conv front-end changes per request: size guards fail, the blocks recompile (then go dynamic), and batch-1 vs batch-2 requests add more. From sgl-project/sglang-omni#750 (opt-in torch.compile for the MOSS-TTS audio encoder: length/batch bucketing to reduce Dynamo recompile churn)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

LABEL = "shape"
SOURCE = "https://github.com/sgl-project/sglang-omni/pull/750"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "encoder.transformer.layers.*"

HOP = 4  # samples per frame after the conv front-end


class ProjectedTransformerLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.out_proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.in_proj(self.norm1(x)).chunk(3, dim=-1)
        x = x + self.out_proj(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return x + self.ff(self.norm2(x))


class ProjectedTransformer(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 1) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ProjectedTransformerLayer(dim) for _ in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class AudioEncoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv1d(1, dim, kernel_size=HOP, stride=HOP)
        self.transformer = ProjectedTransformer(dim)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:  # wav: (batch, 1, samples)
        return self.transformer(self.conv(wav).transpose(1, 2))


class AudioTokenizer(nn.Module):
    def __init__(self, dim: int = 8, codebook: int = 16) -> None:
        super().__init__()
        self.encoder = AudioEncoder(dim)
        self.quantizer = nn.Linear(dim, codebook)

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        return self.quantizer(self.encoder(wav)).argmax(-1)


def build() -> nn.Module:
    return AudioTokenizer().eval()


# (batch, samples) of the reference audio in each request as it arrives at the preprocessing stage
REQUESTS = [(1, 48), (1, 64), (2, 40), (1, 36), (1, 4), (2, 52), (1, 60), (1, 44)]


def step(model: nn.Module, i: int) -> None:
    batch, samples = REQUESTS[i]
    with torch.no_grad():
        model(torch.randn(batch, 1, samples))
