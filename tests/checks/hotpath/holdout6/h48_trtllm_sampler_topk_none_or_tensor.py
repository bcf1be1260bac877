"""Hazard: TensorRT-LLM's PyTorch-flow sampler passes `top_k` / `top_p` to its compiled probability op as `None` when no request in the batch uses them and as a per-request tensor otherwise; the argument flipping between None and Tensor as requests join and leave fails the guards and the op is recompiled for each combination. From NVIDIA/TensorRT-LLM#16981 (review: "torch.compile will recompile the function when a function argument switches between None and a Tensor across calls")."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "optional-arg"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/pull/16981"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


@dataclass
class Request:
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None


def sanitize_top_k(top_k: torch.Tensor, vocab_size: int) -> torch.Tensor:
    return top_k.clamp(min=1, max=vocab_size)


class ComputeProbs(nn.Module):
    """compute_probs_from_logits_op(logits, temperatures, top_k, top_p)."""

    def forward(self, logits, temperatures, top_k: torch.Tensor | None, top_p: torch.Tensor | None) -> torch.Tensor:
        logits = logits / temperatures.unsqueeze(-1)
        if top_k is not None:
            top_k = sanitize_top_k(top_k, logits.shape[-1])
            kth = torch.sort(logits, dim=-1, descending=True).values.gather(-1, (top_k - 1).unsqueeze(-1))
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        if top_p is not None:
            sorted_probs, idx = torch.sort(probs, dim=-1, descending=True)
            drop = sorted_probs.cumsum(-1) - sorted_probs > top_p.unsqueeze(-1)
            probs = probs.scatter(-1, idx, sorted_probs.masked_fill(drop, 0.0))
            probs = probs / probs.sum(-1, keepdim=True)
        return probs


class TorchSampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.compute_probs = ComputeProbs()

    def sample_async(self, logits: torch.Tensor, requests: list[Request]) -> torch.Tensor:
        temperatures = torch.tensor([r.temperature for r in requests])
        top_k = None if all(r.top_k is None for r in requests) else torch.tensor([r.top_k or logits.shape[-1] for r in requests])
        top_p = None if all(r.top_p is None for r in requests) else torch.tensor([r.top_p or 1.0 for r in requests])
        probs = self.compute_probs(logits, temperatures, top_k, top_p)
        return torch.multinomial(probs, 1).squeeze(-1)


REGION = "compute_probs"

_BATCHES = [
    [Request(), Request()],
    [Request(0.7, top_k=4), Request()],
    [Request(0.7, top_k=4), Request(top_p=0.9)],
    [Request(), Request(top_p=0.9)],
    [Request(), Request()],
    [Request(0.8, top_k=8), Request()],
    [Request(), Request(top_p=0.95)],
    [Request(0.7, top_k=4), Request(top_p=0.9)],
]


def build() -> nn.Module:
    return TorchSampler()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model.sample_async(torch.randn(2, 16), _BATCHES[i])
