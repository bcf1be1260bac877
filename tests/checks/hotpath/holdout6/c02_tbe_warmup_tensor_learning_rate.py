"""Clean: the same DLRM-style model and warmup policy, but the table-batched embedding keeps the learning rate in a
0-dim tensor buffer that `set_learning_rate` updates in place, so Dynamo guards only on the tensor's metadata and
the model compiles once for the whole warmup. The fix in pytorch/FBGEMM#3287 (make learning rate a tensor)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_a import SplitTableBatchedEmbeddingBagsTensorLR, WarmupScheduler

LABEL = None
SOURCE = "https://github.com/pytorch/FBGEMM/pull/3287"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SparseArch(nn.Module):
    def __init__(self, num_tables: int = 2, dim: int = 8) -> None:
        super().__init__()
        self.tables = nn.ModuleList(SplitTableBatchedEmbeddingBagsTensorLR(32, dim) for _ in range(num_tables))

    def forward(self, indices: list[torch.Tensor], offsets: list[torch.Tensor]) -> torch.Tensor:
        return torch.cat([t(ix, off) for t, ix, off in zip(self.tables, indices, offsets, strict=True)], dim=1)


class DLRM(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.dense = nn.Sequential(nn.Linear(4, dim), nn.ReLU())
        self.sparse = SparseArch(dim=dim)
        self.over = nn.Linear(3 * dim, 1)

    def forward(self, dense: torch.Tensor, indices: list[torch.Tensor], offsets: list[torch.Tensor]) -> torch.Tensor:
        return self.over(torch.cat([self.dense(dense), self.sparse(indices, offsets)], dim=1))


_scheduler: WarmupScheduler | None = None


def build() -> nn.Module:
    global _scheduler
    model = DLRM()
    _scheduler = WarmupScheduler(list(model.sparse.tables), base_lr=0.02, warmup_steps=10_000)
    return model


def step(model: nn.Module, i: int) -> None:
    offsets = [torch.tensor([0, 2, 3, 5]), torch.tensor([0, 1, 4, 5])]
    indices = [torch.randint(0, 32, (6,)), torch.randint(0, 32, (6,))]
    logits = model(torch.randn(4, 4), indices, offsets)
    logits.sum().backward()
    _scheduler.step()  # fills the 0-dim learning-rate buffer in place
