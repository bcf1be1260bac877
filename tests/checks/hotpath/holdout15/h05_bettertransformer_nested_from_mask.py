"""Hazard: an optimum BetterTransformer-style encoder layer packs the padded batch into a nested tensor with torch._nested_tensor_from_mask inside the compiled forward (its inference fast path); Dynamo cannot put that builtin in a graph, so every layer breaks the graph where the padding mask is used. From pytorch/pytorch#138274 (BetterTransformer fast path on torch 2.5: "Graph break due to unsupported builtin torch._VariableFunctionsClass._nested_tensor_from_mask")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import BetterTransformerEncoderLayer

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/138274"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 3}


class EmbeddingEncoder(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(BetterTransformerEncoderLayer(dim) for _ in range(n_layers))

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
