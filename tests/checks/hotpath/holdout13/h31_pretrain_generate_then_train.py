"""Hazard: a fine-tuning notebook runs a quick `model.generate()` sanity check (under `no_grad`, eval mode) before `trainer.train()`; the compiled forward is first specialised for inference, and the first training step fails the grad-mode/training guards and recompiles the same frame (the report's gpt-oss run then hit the recompile limit, a hard error with fullgraph). From unslothai/unsloth#7004 (Reset torch.compile cache after a pre-train generate, not just a grad probe)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/unslothai/unsloth/pull/7004"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

DIM, VOCAB, SEQ = 8, 32, 6


class TinyCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.SiLU(), nn.Linear(2 * DIM, DIM))
        self.dropout = nn.Dropout(0.1)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        h = h + self.dropout(self.mlp(h))
        return self.lm_head(h)


class SFTTrainerLike:
    """The notebook's flow: FastLanguageModel.for_inference + generate cell, then for_training + trainer.train()."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.batch = torch.randint(0, VOCAB, (2, SEQ + 1), generator=torch.Generator().manual_seed(0))

    def generate_sanity_check(self) -> None:
        self.model.eval()
        with torch.no_grad():
            self.model(self.batch[:, :SEQ])  # the same prompts the first training batch uses

    def training_step(self) -> None:
        self.model.train()
        logits = self.model(self.batch[:, :SEQ])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), self.batch[:, 1:].reshape(-1))
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


def build() -> nn.Module:
    model = TinyCausalLM()
    model._trainer = SFTTrainerLike(model)
    return model


def step(model: nn.Module, i: int) -> None:
    trainer = model._trainer
    if i == 0:
        trainer.generate_sanity_check()  # the "inference" cell before training
    else:
        trainer.training_step()
