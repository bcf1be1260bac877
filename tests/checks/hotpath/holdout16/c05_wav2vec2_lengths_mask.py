"""Clean: a torchaudio-style wav2vec2 encoder given per-utterance `lengths`: it builds the padding mask with
`arange(...) >= lengths[:, None]` and zeroes the padded frames with a boolean-mask assignment `x[mask] = 0.0` inside
the compiled forward; the lengths stay tensors and change every step. From pytorch/audio#2941 (on torch 2.0,
passing `lengths` to the wav2vec2 model broke the compilation). Reported as a hazard, it no longer reproduces on
torch 2.13: the masked assignment is traced into the graph and the forward compiles once, so it is kept as a look-alike
(a tensor mask built from lengths, no Python value read from it)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/audio/pull/2941"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class FeatureProjection(nn.Module):
    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(in_dim)
        self.projection = nn.Linear(in_dim, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.projection(self.layer_norm(x))


class Encoder(nn.Module):
    def __init__(self, in_dim: int = 8, dim: int = 8) -> None:
        super().__init__()
        self.feature_projection = FeatureProjection(in_dim, dim)
        self.transformer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)

    def _preprocess(self, features: torch.Tensor, lengths: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        x = self.feature_projection(features)
        mask = None
        if lengths is not None:
            batch_size, max_len, _ = x.shape
            mask = torch.arange(max_len, device=lengths.device).expand(batch_size, max_len) >= lengths[:, None]
            x[mask] = 0.0
        return x, mask

    def forward(self, features: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        x, mask = self._preprocess(features, lengths)
        return self.transformer(x, src_key_padding_mask=mask)


def build() -> nn.Module:
    return Encoder()


def step(model: nn.Module, i: int) -> None:
    features = torch.randn(2, 6, 8)
    lengths = torch.tensor([6, 3 + i % 3])
    model(features, lengths).pow(2).mean().backward()
