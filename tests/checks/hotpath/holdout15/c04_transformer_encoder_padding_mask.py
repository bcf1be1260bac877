"""Clean: an eval-mode nn.TransformerEncoder (batch_first, so its inference fast path is eligible) is compiled and called with a boolean src_key_padding_mask on every step. The report's mask left-alignment check (`torch._nested_tensor_from_mask_left_aligned`, which returns a Python bool) broke compile; since the fix the check is skipped under torch.compile, and on torch 2.13 the encoder compiles once with no graph break. From pytorch/pytorch#163773 (fix for #163640: "avoids a mask left align check in the case that we're operating under torch.compile / torch.export")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/pull/163773"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TinyEnc(nn.Module):
    def __init__(self, d_model: int = 8, nhead: int = 2, num_layers: int = 2) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=16, batch_first=True, dropout=0.1)
        self.enc = nn.TransformerEncoder(layer, num_layers=num_layers)
        self.proj = nn.Linear(d_model, 4)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        return self.proj(self.enc(x, mask=None, src_key_padding_mask=pad_mask))


def build() -> nn.Module:
    return TinyEnc().eval()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(2, 6, 8)
    lengths = torch.tensor([6, 3 + i % 3])
    pad_mask = torch.arange(6)[None, :] >= lengths[:, None]  # right padding, left-aligned tokens
    with torch.no_grad():
        model(x, pad_mask)
