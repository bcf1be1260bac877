"""Hazard: each compiled transformer block saves its MoE load-balance loss into a module attribute registered as a buffer (`self.aux_loss`), overwriting it with a new autograd tensor on every forward, and the trainer sums those buffers into the final loss; the compiled block reads the buffer's metadata as a guard, so once the first forward has replaced the zero buffer with a grad-carrying loss the guard on its `requires_grad` fails and the block recompiles. From pytorch/torchtitan#2061 ([moe] batch/sequence-wise load balance loss: "if we register a buffer named aux_loss and use it to save the aux loss value ... compile will be broken")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2061"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "layers.*"


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4, top_k: int = 2) -> None:
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.Parameter(torch.randn(num_experts, dim, dim) * 0.1)
        self.register_buffer("aux_loss", torch.zeros(()), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.softmax(self.router(x), dim=-1)
        top_scores, selected = torch.topk(scores, self.top_k, dim=-1)
        dispatch = torch.zeros_like(scores).scatter(1, selected, top_scores)
        counts = torch.zeros_like(scores).scatter(1, selected, 1.0).mean(0)
        self.aux_loss = self.num_experts * (counts * scores.mean(0)).sum()
        return torch.einsum("td,edh,te->th", x, self.experts, dispatch)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention = nn.Linear(dim, dim)
        self.ffn_norm = nn.LayerNorm(dim)
        self.moe = MoE(dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.attention(h)
        return h + self.moe(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, n_layers: int = 2, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Linear(dim, dim)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(dim) for i in range(n_layers)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(x)
        for layer in self.layers.values():
            h = layer(h)
        return h


def build() -> nn.Module:
    return Transformer()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(6, 8))
    aux = sum(layer.moe.aux_loss for layer in model.layers.values())
    (out.pow(2).mean() + 0.01 * aux).backward()
