"""Hazard: a vLLM hardware-plugin wraps its CPU `Sampler` in torch.compile but marks the penalty and logprob helpers `@torch.compiler.disable` to dodge an Inductor issue; every call of a disabled helper inside the compiled sampler is a graph break, fragmenting the sampler into disconnected graphs. From RBLN-SW/vllm-rbln#889 ("Multiple `@torch.compiler.disable` escape hatches fragmented the sampler into disconnected graphs")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/889"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


@torch.compiler.disable
def apply_penalties(logits: torch.Tensor, output_token_counts: torch.Tensor, repetition_penalties: torch.Tensor) -> torch.Tensor:
    seen = output_token_counts > 0
    penalized = torch.where(logits > 0, logits / repetition_penalties.unsqueeze(-1), logits * repetition_penalties.unsqueeze(-1))
    return torch.where(seen, penalized, logits)


@torch.compiler.disable
def compute_logprobs(logits: torch.Tensor) -> torch.Tensor:
    return logits.log_softmax(dim=-1, dtype=torch.float32)


def apply_temperature(logits: torch.Tensor, temp: torch.Tensor) -> torch.Tensor:
    return logits / temp.unsqueeze(dim=1)  # out-of-place: the in-place div_ tripped Inductor


class Sampler(nn.Module):
    def forward(self, logits, temperature, output_token_counts, repetition_penalties) -> tuple[torch.Tensor, torch.Tensor]:
        raw_logprobs = compute_logprobs(logits)
        logits = logits.to(torch.float32)
        logits = apply_penalties(logits, output_token_counts, repetition_penalties)
        logits = apply_temperature(logits, temperature)
        probs = logits.softmax(dim=-1)
        q = torch.empty_like(probs).exponential_()
        return probs.div(q).argmax(dim=-1), raw_logprobs


def build() -> nn.Module:
    return Sampler()


def step(model: nn.Module, i: int) -> None:
    counts = torch.zeros(2, 16, dtype=torch.long)
    counts[:, : i + 1] = 1
    with torch.no_grad():
        model(torch.randn(2, 16), torch.tensor([0.8, 1.0]), counts, torch.tensor([1.1, 1.0]))
