"""Clean: the same BetterTransformer-style encoder stack, but the padding mask goes into scaled_dot_product_attention as a boolean attn_mask instead of packing the batch with torch._nested_tensor_from_mask, so the compiled forward is one graph. Twin of pytorch/pytorch#138274 (BetterTransformer fast path graph-breaks on `_nested_tensor_from_mask`); it follows the direction a PyTorch maintainer gave the same reporter in pytorch/pytorch#126025 (move away from the manually fused nested-tensor fast path to SDPA + torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/138274"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SdpaEncoderLayer(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.out_proj = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, t, d = hidden.shape
        q, k, v = self.in_proj(hidden).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask[:, None, None, :])
        hidden = self.norm1(hidden + self.out_proj(y.transpose(1, 2).reshape(b, t, d)))
        return self.norm2(hidden + self.ff(hidden))


class EmbeddingEncoder(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(SdpaEncoderLayer(dim) for _ in range(n_layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.embeddings(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, attention_mask)
        return (hidden * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)


def build() -> nn.Module:
    return EmbeddingEncoder().eval()


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 32, (2, 6))
    lengths = torch.tensor([6, 4])
    attention_mask = torch.arange(6)[None, :] < lengths[:, None]
    with torch.no_grad():
        model(input_ids, attention_mask)
