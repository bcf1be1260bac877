"""Hazard: a torchtune PPO recipe compiles the policy model once (`training.compile_model`) and then drives it from two
stages: generation under `torch.no_grad()` one token at a time, and the optimisation pass with grad on the full
sequence. The grad-mode guard and the sequence length both differ between the stages, so the policy recompiles for the
no-grad stage, again for the single-token shape, and keeps several entries alive. From pytorch/pytorch#141589
(minimizing recompiles when compiling multiple inlined nn.Modules, torchtune PPO)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/141589"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class TransformerDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 16, dropout=0.0, batch_first=True)
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.output(self.layer(self.tok_embeddings(tokens)))


class PPOModels(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.policy_model = TransformerDecoder()
        self.value_model = TransformerDecoder()


REGION = "*"


def generate(policy: nn.Module, prompt: torch.Tensor, max_generated_tokens: int = 2) -> torch.Tensor:
    """torchtune.generation.generate: prefill on the prompt, then one token per step."""
    tokens = prompt
    with torch.no_grad():
        logits = policy(tokens)
        for _ in range(max_generated_tokens):
            next_token = logits[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
            logits = policy(next_token)
    return tokens


def build() -> nn.Module:
    return PPOModels()


PROMPT = torch.ones(1, 6, dtype=torch.long)


def step(model: nn.Module, i: int) -> None:
    query_responses = generate(model.policy_model, PROMPT)
    with torch.no_grad():
        values = model.value_model(query_responses)
    logits = model.policy_model(query_responses)  # PPO optimisation pass, with grad
    loss = logits.logsumexp(-1).mean() - values.mean()
    loss.backward()
