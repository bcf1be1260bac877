"""Hazard: torchrec's embedding-memory-stashing pipeline installs a forward pre-hook on the `stash_site_fqn` submodule that calls `MemoryStashingManager.execute_pending_stashes()`, draining a class-level queue of `free_hbm` closures the pipeline enqueued after the sparse lookup; the compiled model inlines the hook, and the class-level registry the closures fill (empty on the first call, populated afterwards) fails a guard, so the model recompiles. From meta-pytorch/torchrec#4129 (forward pre-hook at stash_site_fqn), whose compile problem #4383 later reworked."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_a import MemoryStashingManager

LABEL = "pre-hook"
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4129"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class SparseArch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ebc = nn.EmbeddingBag(32, 8, mode="sum")

    def forward(self, ids, offsets):
        return self.ebc(ids, offsets)


class TestSparseNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sparse = SparseArch()
        self.dense = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.over = nn.Linear(16, 1)

    def forward(self, dense_features, ids, offsets):
        pooled = self.sparse(ids, offsets)
        return self.over(torch.cat([self.dense(dense_features), pooled], dim=-1))


class TrainPipelineSparseDistEmbStash:
    """Pipeline-side wiring: `_pipeline_model()` hooks the stash site; `progress()` enqueues stashes per batch."""

    def __init__(self, model: nn.Module, stash_site_fqn: str = "dense") -> None:
        self.model = model
        site = model.get_submodule(stash_site_fqn)
        site.register_forward_pre_hook(lambda module, args: MemoryStashingManager.execute_pending_stashes())

    def progress(self, batch) -> None:
        # after the input dist, the lookup's staging buffer is scheduled for a D2H stash
        staging = self.model.sparse.ebc.weight.detach().clone()
        MemoryStashingManager.enqueue_stash("sparse.ebc.weight", staging)
        self.model(*batch).sum().backward()


_pipelines: dict[int, TrainPipelineSparseDistEmbStash] = {}


def build() -> nn.Module:
    MemoryStashingManager.reset()
    model = TestSparseNN()
    _pipelines[id(model)] = TrainPipelineSparseDistEmbStash(model)
    return model


def step(model: nn.Module, i: int) -> None:
    ids = torch.tensor([1, 4, 9, 16, 3, 7])
    batch = (torch.randn(2, 8), ids, torch.tensor([0, 3]))
    _pipelines[id(model)].progress(batch)
