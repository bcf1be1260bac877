"""Clean: the same LitGPT-style pretraining loop after the fix: the DataLoader uses `drop_last=True`, so every batch has the same shape across epochs and the compiled GPT forward is compiled once. From Lightning-AI/litgpt#794."""
from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LABEL = None
SOURCE = "https://github.com/Lightning-AI/litgpt/pull/794"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

BLOCK, VOCAB, DIM = 6, 32, 8
DROP_LAST = True


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(BLOCK, DIM)
        self.h = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        return self.lm_head(x + self.h(x))


class _TrainState:
    """The `state` dict of litgpt's pretrain `fit()`: the dataloader iterator survives across iterations."""

    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.iterator = iter(loader)

    def next_batch(self) -> torch.Tensor:
        try:
            (batch,) = next(self.iterator)
        except StopIteration:  # new epoch
            self.iterator = iter(self.loader)
            (batch,) = next(self.iterator)
        return batch


def build() -> nn.Module:
    model = GPT()
    data = torch.randint(0, VOCAB, (11, BLOCK + 1), generator=torch.Generator().manual_seed(0))
    loader = DataLoader(TensorDataset(data), batch_size=4, shuffle=False, drop_last=DROP_LAST)
    model._state = _TrainState(loader)
    model._optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    return model


def step(model: nn.Module, i: int) -> None:
    train_data = model._state.next_batch()
    input_ids, targets = train_data[:, :BLOCK], train_data[:, 1:]
    logits = model(input_ids)
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    model._optimizer.step()
    model._optimizer.zero_grad()
