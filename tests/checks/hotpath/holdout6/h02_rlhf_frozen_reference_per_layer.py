"""Hazard: a torchtune-style PPO recipe compiles every transformer layer of four models that share one layer class
(policy, value, frozen reference policy, frozen reward model); the rollout runs under `torch.no_grad()` and the
frozen models' parameters have `requires_grad=False`, so the shared layer code fails the guards left by the other
models (parameter requires_grad mismatch, grad-mode global state for the PPO update) and recompiles for each
combination. From pytorch/pytorch#141589 (minimizing recompiles when compiling multiple inlined nn.Modules)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/pytorch/issues/141589"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
REGION = "*.layers.*"


class TransformerSelfAttentionLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.sa_norm = nn.RMSNorm(dim)
        self.attn = nn.Linear(dim, dim)
        self.mlp_norm = nn.RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(self.sa_norm(x))
        return h + self.mlp(self.mlp_norm(h))


class TransformerDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, num_layers: int = 2, out: int | None = None) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(TransformerSelfAttentionLayer(dim) for _ in range(num_layers))
        self.norm = nn.RMSNorm(dim)
        self.output = nn.Linear(dim, out or vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


class PPOModels(nn.Module):
    """What the recipe holds; `training.compile_model` is applied to each model's layers."""

    def __init__(self) -> None:
        super().__init__()
        self.policy_model = TransformerDecoder()
        self.value_model = TransformerDecoder(out=1)
        self.ref_policy_model = TransformerDecoder()
        self.reward_model = TransformerDecoder(out=1)
        for frozen in (self.ref_policy_model, self.reward_model):
            frozen.eval()
            for p in frozen.parameters():
                p.requires_grad = False


def build() -> nn.Module:
    return PPOModels()


def step(models: nn.Module, i: int) -> None:
    tokens = torch.randint(0, 16, (1, 6))
    with torch.no_grad():  # rollout: generate with the policy, score with the frozen models
        models.policy_model(tokens)
        ref_logits = models.ref_policy_model(tokens)
        scores = models.reward_model(tokens)[:, -1]
    logits = models.policy_model(tokens)  # PPO update
    values = models.value_model(tokens)
    loss = (logits - ref_logits).pow(2).mean() + (values.squeeze(-1) - scores).pow(2).mean()
    loss.backward()
