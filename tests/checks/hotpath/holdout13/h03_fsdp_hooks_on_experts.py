"""Hazard: each transformer block is compiled on its own, but its MoE experts are wrapped by an FSDP-style `fully_shard`, whose unshard/reshard forward hooks are dynamo-disabled; when the compiled block calls the experts, `nn.Module.__call__` runs those hooks and the graph breaks around them in every block. From pytorch/torchtitan#1365 (initial compile support for llama4: graph breaks because FSDP hooks on the MoE experts are explicitly disabled)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_a import fully_shard

LABEL = "pre-hook"
SOURCE = "https://github.com/pytorch/torchtitan/pull/1365"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}
REGION = "layers.*"


class GroupedExperts(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_experts: int = 2) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.1)

    def forward(self, x: torch.Tensor, dispatch: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.silu(torch.einsum("td,edh->eth", x, self.w1))
        return torch.einsum("eth,ehd,te->td", h, self.w2, dispatch)


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 2) -> None:
        super().__init__()
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = GroupedExperts(dim, num_experts=num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.experts(x, torch.softmax(self.router(x), dim=-1))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = nn.Linear(dim, dim)
        self.ffn_norm = nn.LayerNorm(dim)
        self.moe = MoE(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x))
        return h + self.moe(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, n_layers: int = 2, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Linear(dim, dim)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(dim) for i in range(n_layers)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.tok_embeddings(x)
        for layer in self.layers.values():
            x = layer(x)
        return x


def build() -> nn.Module:
    model = Transformer()
    for block in model.layers.values():
        fully_shard(block.moe.experts)  # experts get their own FSDP unit (expert parallel layout)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
