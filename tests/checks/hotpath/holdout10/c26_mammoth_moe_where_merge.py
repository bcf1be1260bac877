"""Clean: the same MammothModa2-style dual-expert MLP runs both experts on every token and merges them with `torch.where` on the generation mask (the rewrite in vllm-project/vllm-omni#7432 for the embedding path), so no tensor truth test or `.item()` is left and the backbone compiles once for every mix of tokens."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm-omni/pull/7432"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Mammoth2MoE(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.und_expert = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.gen_expert = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def moe_forward(self, x: torch.Tensor, gen_token_mask: torch.Tensor) -> torch.Tensor:
        und_out = self.und_expert(x)
        gen_out = self.gen_expert(x)
        return torch.where(gen_token_mask.unsqueeze(-1), gen_out, und_out)

    def forward(self, hidden_states: torch.Tensor, gen_token_mask: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.moe_forward(hidden_states, gen_token_mask)


def build() -> nn.Module:
    return Mammoth2MoE()


def step(model: nn.Module, i: int) -> None:
    # 8 tokens per scheduler step: understanding-only prefill, then mixed steps with a growing image-token share
    num_gen = [0, 2, 3, 8, 1, 5, 0, 4][i]
    mask = torch.zeros(8, dtype=torch.bool)
    mask[8 - num_gen :] = True
    with torch.no_grad():
        model(torch.randn(8, 8), mask)
