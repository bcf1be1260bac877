"""Hazard: the HPU platform wraps the warm-up/profile path in `current_platform.inference_mode()` (torch.inference_mode) while the model runner's `execute_model` runs under `torch.no_grad()`, so the model compiled during warm-up is guarded on inference mode and the first real request recompiles it under the other grad mode. From HabanaAI/vllm-fork#1690 (Remove inference_mode() from platforms.hpu: it causes recompilations with t.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/1690"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class HpuPlatform:
    @classmethod
    def inference_mode(cls):
        return torch.inference_mode()


current_platform = HpuPlatform()


class LlamaModel(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layer = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        return self.norm(h + self.layer(h))


class HPUModelRunner:
    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def warmup_scenario(self, batch_size: int, seq_len: int) -> None:
        with current_platform.inference_mode():
            self.model(torch.zeros(batch_size, seq_len, dtype=torch.long))

    @torch.no_grad()
    def execute_model(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids)


def build() -> nn.Module:
    model = LlamaModel()
    model.runner = HPUModelRunner(model)
    return model


def step(model: nn.Module, i: int) -> None:
    if i == 0:  # warm-up of the (2, 4) bucket before serving
        model.runner.warmup_scenario(batch_size=2, seq_len=4)
    else:
        model.runner.execute_model(torch.randint(0, 32, (2, 4)))
