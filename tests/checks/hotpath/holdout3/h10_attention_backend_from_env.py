"""Hazard: the attention dispatcher reads the backend from `os.getenv("ATTN_BACKEND")` inside the compiled forward; Dynamo bakes the value read on the first call into the graph without a guard, so when the run switches the variable (here at step 4) the compiled model keeps using the old backend. From pytorch/pytorch#189027 ([dynamo] Guard os.environ reads: "`os.getenv` results are baked into compiled graphs as constants with no guard")."""
from __future__ import annotations

import os

import torch
from torch import nn

LABEL = "env"
SOURCE = "https://github.com/pytorch/pytorch/pull/189027"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
LATENT = "os.getenv is baked into the graph without a guard on torch 2.13: after the switch at step 4 there is no recompile and the compiled forward keeps the backend it read at step 0"


def dispatch_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    backend = os.getenv("ATTN_BACKEND", "sdpa")
    if backend == "math":
        weights = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return weights @ v
    return nn.functional.scaled_dot_product_attention(q, k, v)


class Attention(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.to_q = nn.Linear(hidden, hidden)
        self.to_k = nn.Linear(hidden, hidden)
        self.to_v = nn.Linear(hidden, hidden)
        self.to_out = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.to_out(dispatch_attention(self.to_q(x), self.to_k(x), self.to_v(x)))


def build() -> nn.Module:
    os.environ.pop("ATTN_BACKEND", None)
    return Attention()


def step(model: nn.Module, i: int) -> None:
    if i == 4:
        os.environ["ATTN_BACKEND"] = "math"  # switch to the reference kernel for the second half of the eval
    try:
        with torch.no_grad():
            model(torch.randn(2, 4, 8))
    finally:
        if i == 7:
            os.environ.pop("ATTN_BACKEND", None)
