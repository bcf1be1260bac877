"""Hazard: a vision-language-action policy is compiled at `policy.sample_actions`-level, whose inputs include the task prompt as a Python string that is tokenized inside the compiled region; every new instruction is a new constant for Dynamo, so each episode with a different prompt recompiles the policy. From TensorAuto/OpenTau#114 (compile policy.model.sample_actions instead of policy.sample_actions: "non-tensor inputs (such as strings for prompts) ... cause torch to recompile")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import TASKS, PromptTokenizer

LABEL = "string-arg"
SOURCE = "https://github.com/TensorAuto/OpenTau/pull/114"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class FlowMatchingModel(nn.Module):
    """The tensor-only part: prompt tokens + proprio state -> an action chunk."""

    def __init__(self, vocab: int = 32, dim: int = 8, action_dim: int = 4, chunk: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.state_proj = nn.Linear(dim, dim)
        self.action_head = nn.Linear(dim, action_dim * chunk)
        self.action_dim, self.chunk = action_dim, chunk

    def forward(self, lang_tokens: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        mask = (lang_tokens != 0).unsqueeze(-1).float()
        prefix = (self.embed(lang_tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        h = torch.tanh(prefix + self.state_proj(state))
        return self.action_head(h).view(-1, self.chunk, self.action_dim)


class Policy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = FlowMatchingModel()
        self.tokenizer = PromptTokenizer()

    def forward(self, batch: dict) -> torch.Tensor:  # sample_actions(batch)
        lang_tokens = self.tokenizer(batch["task"])
        return self.model(lang_tokens, batch["observation.state"])


def build() -> nn.Module:
    return Policy()


def step(model: nn.Module, i: int) -> None:
    # inference.py: one new episode (and instruction) per step of this loop
    batch = {"task": TASKS[i], "observation.state": torch.randn(1, 8)}
    with torch.no_grad():
        model(batch)
