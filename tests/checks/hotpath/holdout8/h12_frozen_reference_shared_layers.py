"""Hazard: a full-finetune DPO/PPO recipe compiles every transformer layer of both the trainable policy and a frozen deep copy used as reference model; the layers share one forward code object, and the reference's parameters have `requires_grad=False`, so the layer code compiled for the policy fails its guards on the reference and compiles again. From meta-pytorch/torchtune#2082 (policy and reference model share the inlined layer block: recompiles due to param.requires_grad)."""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/meta-pytorch/torchtune/issues/2082"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class TransformerSelfAttentionLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.sa_norm = nn.LayerNorm(dim)
        self.attn = nn.Linear(dim, dim)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(self.sa_norm(x))
        return h + self.mlp(F.silu(self.mlp_norm(h)))


class TransformerDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(TransformerSelfAttentionLayer(dim) for _ in range(n_layers))
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(h)


class DPORecipe(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.policy = TransformerDecoder()
        self.ref_model = copy.deepcopy(self.policy)
        self.ref_model.eval()
        for p in self.ref_model.parameters():
            p.requires_grad = False


REGION = "*.layers.*"  # training.compile_model: compile each layer of each model


def build() -> nn.Module:
    return DPORecipe()


def _logps(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return torch.gather(logits.log_softmax(-1), 2, tokens.unsqueeze(2)).squeeze(2).sum(-1)


def step(model: nn.Module, i: int) -> None:
    chosen, rejected = torch.randint(0, 16, (2, 6)), torch.randint(0, 16, (2, 6))
    batch = torch.cat([chosen, rejected])
    ref = _logps(model.ref_model(batch), batch).detach()
    pol = _logps(model.policy(batch), batch)
    pi, rf = pol.chunk(2), ref.chunk(2)
    (-F.logsigmoid(0.1 * ((pi[0] - rf[0]) - (pi[1] - rf[1]))).mean()).backward()
