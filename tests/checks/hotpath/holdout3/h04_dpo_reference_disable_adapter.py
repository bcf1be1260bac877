"""Hazard: a DPO step runs the policy twice — once with LoRA on, once inside a `disable_adapter()` context that flips a `disabled` flag on every LoRA layer for the reference logits — so the compiled model keeps one graph per flag value and recompiles when the flag flips. From pytorch/pytorch#124717 (Compile doesn't guard on user NN module attribute: torchtune's `disable_adapter` pattern)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/124717"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoRALinear(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, rank: int = 4, alpha: float = 8.0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim) * 0.1, requires_grad=False)
        self.lora_a = nn.Linear(in_dim, rank, bias=False)
        self.lora_b = nn.Linear(rank, out_dim, bias=False)
        self.scaling = alpha / rank
        self.disabled = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = nn.functional.linear(x, self.weight)
        if self.disabled:
            return out
        return out + self.lora_b(self.lora_a(x)) * self.scaling


class PolicyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.q_proj = LoRALinear(8, 8)
        self.output = nn.Linear(8, 16)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.output(torch.tanh(self.q_proj(self.embed(tokens))))


def build() -> nn.Module:
    return PolicyModel()


def step(model: nn.Module, i: int) -> None:
    chosen = torch.randint(0, 16, (2, 4))
    policy_logits = model(chosen)
    with torch.no_grad(), _helpers_a.disable_adapter(model):
        reference_logits = model(chosen)
    loss = -(policy_logits.log_softmax(-1) - reference_logits.log_softmax(-1)).mean()
    loss.backward()
    model.zero_grad(set_to_none=True)
