"""Clean: the same compiled MoE blocks, but the load-balance loss is threaded through the forward as an accumulated tensor (`h, accumulated_load_balance_loss = layer(h, accumulated_load_balance_loss)`) and returned to the trainer, so no module attribute is written inside the compiled region. Look-alike of pytorch/torchtitan#2061 (the version the PR settles on: pass the accumulated loss through the layers)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/2061"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*"


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4, top_k: int = 2) -> None:
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.Parameter(torch.randn(num_experts, dim, dim) * 0.1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = torch.softmax(self.router(x), dim=-1)
        top_scores, selected = torch.topk(scores, self.top_k, dim=-1)
        dispatch = torch.zeros_like(scores).scatter(1, selected, top_scores)
        counts = torch.zeros_like(scores).scatter(1, selected, 1.0).mean(0)
        load_balance_loss = self.num_experts * (counts * scores.mean(0)).sum()
        return torch.einsum("td,edh,te->th", x, self.experts, dispatch), load_balance_loss


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention = nn.Linear(dim, dim)
        self.ffn_norm = nn.LayerNorm(dim)
        self.moe = MoE(dim)

    def forward(self, h: torch.Tensor, accumulated_load_balance_loss: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = h + self.attention(h)
        moe_out, load_balance_loss = self.moe(self.ffn_norm(h))
        return h + moe_out, accumulated_load_balance_loss + load_balance_loss


class Transformer(nn.Module):
    def __init__(self, n_layers: int = 2, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Linear(dim, dim)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(dim) for i in range(n_layers)})

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.tok_embeddings(x)
        accumulated_load_balance_loss = torch.zeros((), device=h.device, dtype=torch.float32, requires_grad=True)
        for layer in self.layers.values():
            h, accumulated_load_balance_loss = layer(h, accumulated_load_balance_loss)
        return h, accumulated_load_balance_loss


def build() -> nn.Module:
    return Transformer()


def step(model: nn.Module, i: int) -> None:
    out, aux = model(torch.randn(6, 8))
    (out.pow(2).mean() + 0.01 * aux).backward()
