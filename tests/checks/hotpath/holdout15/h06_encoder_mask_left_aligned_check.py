"""Hazard: an encoder written after nn.TransformerEncoder's inference fast path checks, inside the compiled forward, whether the padding mask is left-aligned with torch._nested_tensor_from_mask_left_aligned (a Python bool computed from tensor data) and branches on it to decide whether to pack the batch into a nested tensor. From pytorch/pytorch#163640 (TransformerEncoder with a boolean src_key_padding_mask under torch.compile: the internal `torch._nested_tensor_from_mask_left_aligned` "returns a bool instead of a Tensor" and Dynamo cannot continue the graph)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/163640"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class FastPathEncoder(nn.Module):
    def __init__(self, d_model: int = 8, nhead: int = 2, num_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=16, batch_first=True, dropout=0.0)
            for _ in range(num_layers)
        )
        self.proj = nn.Linear(d_model, 4)
        self.mask_check = True

    def forward(self, src: torch.Tensor, src_key_padding_mask: torch.Tensor) -> torch.Tensor:
        output = src
        padding_mask = src_key_padding_mask
        convert_to_nested = False
        if self.mask_check and torch._nested_tensor_from_mask_left_aligned(src, src_key_padding_mask.logical_not()):
            # left-aligned padding: zero the padded slots once and let the layers skip the mask
            output = src.masked_fill(src_key_padding_mask[..., None], 0.0)
            padding_mask = None
            convert_to_nested = True
        for layer in self.layers:
            output = layer(output, src_key_padding_mask=padding_mask)
        if convert_to_nested:
            output = output.masked_fill(src_key_padding_mask[..., None], 0.0)
        return self.proj(output)


def build() -> nn.Module:
    return FastPathEncoder().eval()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(2, 6, 8)
    lengths = torch.tensor([6, 3 + i % 3])
    pad_mask = torch.arange(6)[None, :] >= lengths[:, None]
    with torch.no_grad():
        model(x, pad_mask)
