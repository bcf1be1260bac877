"""Hazard: an accelerate training script compiles the prepared model, trains, and every few steps runs its evaluation pass with `model.eval()` under `torch.no_grad()`; the compiled forward is guarded on grad mode and the training flag, so the first evaluation compiles a second graph on top of the training graph. From huggingface/accelerate#2964 (calling the compiled model under `torch.no_grad()` to avoid recompilation due to the different grad mode in the evaluation loop)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "outside"
SOURCE = "https://github.com/huggingface/accelerate/pull/2964"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, input_values: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(input_values))


class Accelerator:
    """The bits of accelerate.Accelerator the loop uses (single process, no mixed precision)."""

    def prepare(self, model: nn.Module, optimizer: torch.optim.Optimizer):
        return model, optimizer

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()


_STATE: dict[str, object] = {}


def build() -> nn.Module:
    model = Classifier()
    accelerator = Accelerator()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = accelerator.prepare(model, optimizer)
    _STATE.update(accelerator=accelerator, optimizer=optimizer)
    return model


def step(model: nn.Module, i: int) -> None:
    accelerator, optimizer = _STATE["accelerator"], _STATE["optimizer"]
    g = torch.Generator().manual_seed(i)
    x, y = torch.randn(4, 8, generator=g), torch.randint(0, 3, (4,), generator=g)
    model.train()
    loss = F.cross_entropy(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    if i % 4 == 3:  # --eval_steps 4
        model.eval()
        with torch.no_grad():
            preds = model(torch.randn(4, 8, generator=g)).argmax(-1)
        _STATE["accuracy"] = (preds == y).float().mean()
