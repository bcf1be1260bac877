"""Hazard: the vLLM HPU model runner warms the compiled model up under `torch.inference_mode()` but its base-class `execute_model` runs under `torch.no_grad()`; the serving-time inputs and buffers are no longer inference tensors, so the dispatch-key part of the tensor guards fails and the model is recompiled once warmup is over. From HabanaAI/vllm-fork#640 (TC llama recompile fix - no_grad to inference_mode)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/640"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.SiLU(), nn.Linear(16, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids) + positions.unsqueeze(-1).float() * 0.01
        return self.lm_head(h + self.mlp(h))


class HPUModelRunner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = LlamaForCausalLM()

    def _prepare_inputs(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randint(0, 32, (4, 1)), torch.full((4, 1), step)

    @torch.inference_mode()
    def warmup_model(self) -> None:
        self.model(*self._prepare_inputs(0))

    @torch.no_grad()
    def execute_model(self, step: int) -> torch.Tensor:
        return self.model(*self._prepare_inputs(step))


REGION = "model"


def build() -> nn.Module:
    return HPUModelRunner()


def step(model: nn.Module, i: int) -> None:
    if i < 2:
        model.warmup_model()  # warmup over the bucket list
    else:
        model.execute_model(i)
