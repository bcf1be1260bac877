"""Hazard: `wandb.watch(model, log="all", log_freq=...)` is called on a model that is then compiled; the tracker's forward hook (counter in a closure list) runs inside the compiled forward and, every log_freq calls, computes parameter histograms with `.item()` calls, so the graph breaks whenever it logs and the stats code recompiles for every parameter name and shape. From wandb/wandb#10221 (watching gradient weights with a compiled model fails; graph break in wandb_torch.log_tensor_stats)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import watch

LABEL = "hook"
SOURCE = "https://github.com/wandb/wandb/issues/10221"
OBSERVED = {"compiles_over_8_steps": 17, "graph_breaks": 9}


class TransformerLM(nn.Module):
    """A tiny cs336-style LM: embedding, one pre-norm block, bias-free linears and head."""

    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab, dim)
        self.ln = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim, bias=False), nn.SiLU(), nn.Linear(2 * dim, dim, bias=False))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.token_embeddings(input_ids)
        h = h + self.ffn(self.ln(h))
        return self.lm_head(h)


def build() -> nn.Module:
    model = TransformerLM()
    watch(model, log="all", log_freq=5)  # wandb.watch before torch.compile, as in the report
    return model


_OPT: dict[int, torch.optim.Optimizer] = {}


def step(model: nn.Module, i: int) -> None:
    opt = _OPT.setdefault(id(model), torch.optim.AdamW(model.parameters(), lr=1e-3))
    input_ids = torch.randint(0, 16, (2, 6), generator=torch.Generator().manual_seed(i))
    logits = model(input_ids[:, :-1])
    F.cross_entropy(logits.reshape(-1, 16), input_ids[:, 1:].reshape(-1)).backward()
    opt.step()
    opt.zero_grad()
