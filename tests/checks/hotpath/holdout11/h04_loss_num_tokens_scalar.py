"""Hazard: the compiled loss head normalises the summed cross-entropy by `num_tokens`, a Python number the training loop counts per batch from the padding mask; the scalar argument is guarded by value, so the first batch with a different token count recompiles the loss (then the scalar is made dynamic). From pytorch/pytorch#119778 (torch.compile doesn't convert all input scalar types to symbolic values: `t / v` with v=2.1 then 3.2)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/119778"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LMHeadWithLoss(nn.Module):
    def __init__(self, dim: int = 8, vocab: int = 4) -> None:
        super().__init__()
        self.head = nn.Linear(dim, vocab)

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor, num_tokens: float) -> torch.Tensor:
        logits = self.head(hidden)
        loss = nn.functional.cross_entropy(logits, labels, reduction="sum", ignore_index=-100)
        return loss / num_tokens


def build() -> nn.Module:
    return LMHeadWithLoss()


def step(model: nn.Module, i: int) -> None:
    gen = torch.Generator().manual_seed(i)
    hidden = torch.randn(6, 8, generator=gen)
    valid = [5, 6, 3, 4, 6, 2, 5, 4][i]  # real tokens in this padded batch
    labels = torch.randint(0, 4, (6,), generator=gen)
    labels[valid:] = -100
    num_tokens = float((labels != -100).sum().item())  # counted on the host, outside the model
    model(hidden, labels, num_tokens).backward()
