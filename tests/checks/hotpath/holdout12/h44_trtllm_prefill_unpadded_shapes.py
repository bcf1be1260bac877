"""Hazard: TensorRT-LLM's PyTorch-backend model engine pads decode batches up to the captured CUDA-graph batch sizes, but prefill iterations run outside CUDA graphs (memory limit) with the raw number of context tokens, so the compiled model meets new leading dimensions at runtime and recompiles (on this torch once, before automatic dynamic shapes absorb the rest; the engine hit the recompile limit with its static-shape setup). From NVIDIA/TensorRT-LLM#7404 (Check why we hit recompilation during RT)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import CudaGraphBatchPadder

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/issues/7404"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        return self.lm_head(h + self.mlp(h))


class PyTorchModelEngine:
    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.cuda_graph_padder = CudaGraphBatchPadder([1, 2, 4, 8])

    def forward(self, input_ids: torch.Tensor, is_context: bool) -> torch.Tensor:
        if not is_context:  # generation step: replayed from a CUDA graph of a padded batch size
            input_ids = self.cuda_graph_padder.pad(input_ids)
        return self.model(input_ids)


def build() -> nn.Module:
    model = LlamaForCausalLM()
    model.engine = PyTorchModelEngine(model)
    return model


_SCHEDULE = [(True, 13), (False, 3), (True, 7), (False, 3), (True, 21), (False, 4), (True, 10), (False, 4)]


def step(model: nn.Module, i: int) -> None:
    is_context, num_tokens = _SCHEDULE[i]
    with torch.no_grad():
        model.engine.forward(torch.randint(0, 32, (num_tokens,)), is_context)
