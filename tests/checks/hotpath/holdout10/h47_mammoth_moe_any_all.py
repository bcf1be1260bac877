"""Hazard: a vLLM-omni MammothModa2-style dual-expert MLP picks its path with `if not gen_token_mask.any()` / `if gen_token_mask.all()` and splits mixed batches with `int(mask.sum().item())`, so the compiled AR backbone breaks on the tensor truth tests and specialises on the token count. From vllm-project/vllm-omni#7432 (enable torch.compile on MammothModa2 AR backbone: `.any()`/`.all()` graph breaks, `int(...)` recompile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/vllm-project/vllm-omni/pull/7432"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 4}


class Mammoth2MoE(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.und_expert = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.gen_expert = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def moe_forward(self, x: torch.Tensor, gen_token_mask: torch.Tensor) -> torch.Tensor:
        if not gen_token_mask.any():
            return self.und_expert(x)
        if gen_token_mask.all():
            return self.gen_expert(x)
        num_gen = int(gen_token_mask.sum().item())
        order = torch.argsort(gen_token_mask.int(), stable=True)
        x_sorted = x[order]
        und_out = self.und_expert(x_sorted[: x.shape[0] - num_gen])
        gen_out = self.gen_expert(x_sorted[x.shape[0] - num_gen :])
        out = torch.empty_like(x)
        out[order] = torch.cat([und_out, gen_out])
        return out

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
