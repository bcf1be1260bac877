"""Hazard: torchtitan-style MoE with per-block compile: the MoE feed-forward routes tokens with a top-1 router,
counts tokens per expert with `histc`, then runs the experts in a Python for-loop over
`num_tokens_per_expert.tolist()` split sizes, so every compiled TransformerBlock breaks its graph at the `.tolist()`
and the per-expert split sizes, different every batch, are specialised in what follows. From pytorch/torchtitan#1875
(MoE + compile + AC graph break; the workaround compiles the dense layers and runs the MoE layers in eager)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/torchtitan/pull/1875"
OBSERVED = {"compiles_over_8_steps": 11, "graph_breaks": 3}
REGION = "layers.*"

NUM_EXPERTS = 4


class GroupedExperts(nn.Module):
    def __init__(self, dim: int, hidden: int, num_experts: int) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.1)

    def forward(self, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
        # _run_experts_for_loop
        split_sizes = num_tokens_per_expert.tolist()
        outs = []
        for expert_idx, x_expert in enumerate(torch.split(x, split_sizes, dim=0)):
            h = torch.relu(x_expert @ self.w1[expert_idx])
            outs.append(h @ self.w2[expert_idx])
        return torch.cat(outs, dim=0)


class MoE(nn.Module):
    def __init__(self, dim: int, hidden: int = 16, num_experts: int = NUM_EXPERTS) -> None:
        super().__init__()
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = GroupedExperts(dim, hidden, num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bs, slen, dim = x.shape
        tokens = x.reshape(-1, dim)
        scores = torch.sigmoid(self.router(tokens))
        top_scores, selected = scores.max(dim=-1)
        num_tokens_per_expert = torch.histc(selected.float(), bins=NUM_EXPERTS, min=0, max=NUM_EXPERTS - 1)
        order = torch.argsort(selected, stable=True)
        routed = tokens[order] * top_scores[order, None]
        out = torch.empty_like(tokens)
        out[order] = self.experts(routed, num_tokens_per_expert.to(torch.int64))
        return out.reshape(bs, slen, dim)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = nn.Linear(dim, dim)  # stands in for the attention sub-layer
        self.ffn_norm = nn.LayerNorm(dim)
        self.moe = MoE(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.attention_norm(x)
        x = x + self.attention(h)
        return x + self.moe(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, n_layers: int = 1) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(dim) for i in range(n_layers)})
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h)
        return self.output(h)


def build() -> nn.Module:
    return Transformer()


def step(model: nn.Module, i: int) -> None:
    tokens = torch.randint(0, 16, (2, 6))
    logits = model(tokens)
    nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten()).backward()
