"""Clean: the same blocks with FSDP-wrapped experts, but compilation is woven around the FSDP unit: only the attention submodule of each block is compiled and the experts (with their dynamo-disabled unshard/reshard hooks) run eager, so the compiled region never meets a hook. Look-alike of pytorch/torchtitan#1895 ([MoE][compile] weave torch.compile around the FSDP(GroupedExperts) graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_a import fully_shard

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/1895"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*.attention"


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


class Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.wqkv = nn.Linear(dim, 3 * dim)
        self.wo = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.wqkv(self.norm(x)).chunk(3, dim=-1)
        return self.wo(torch.softmax(q @ k.t() / 8**0.5, dim=-1) @ v)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention = Attention(dim)
        self.ffn_norm = nn.LayerNorm(dim)
        self.moe = MoE(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(x)
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
        fully_shard(block.moe.experts)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
