"""Clean: the fixed expert path: tokens are scattered into a padded per-expert batch with tensor ops and a bmm, no host sync. From pytorch/torchtitan#2369."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/2369"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GroupedExperts(nn.Module):
    def __init__(self, num_experts: int = 4) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, 8, 8) * 0.1)

    def forward(self, x: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        onehot = torch.nn.functional.one_hot(expert_ids, self.w1.shape[0]).to(x.dtype)
        per_expert = torch.einsum("te,td->etd", onehot, x)
        out = torch.bmm(per_expert, self.w1)
        return torch.einsum("te,etd->td", onehot, out)


def build() -> nn.Module:
    return GroupedExperts()


def step(model: nn.Module, i: int) -> None:
    ids = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3]).roll(i)
    with torch.no_grad():
        model(torch.randn(8, 8), ids)
