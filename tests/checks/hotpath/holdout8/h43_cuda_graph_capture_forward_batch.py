"""Hazard: an SGLang-style CUDA-graph runner captures one graph per batch size by running the compiled model under a forward context whose ForwardBatch carries `batch_size` as a Python int; the logits processor reads it from the module-level context to slice the padded batch, so every captured size fails the int guard and recompiles the model until the recompile limit. From sgl-project/sglang#9179 (torch.compile recompiles per batch size during CUDA graph capture)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_c import ForwardBatch, get_forward_context, set_forward_context

LABEL = "helper-module"
SOURCE = "https://github.com/sgl-project/sglang/pull/9179"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}

MAX_BS = 48  # inputs are padded to the largest captured batch, as the graph runner's static buffers are


class LogitsProcessor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 16)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        forward_batch = get_forward_context()
        if forward_batch.forward_mode == "decode":
            hidden_states = hidden_states[: forward_batch.batch_size]  # drop the padded rows
        return self.lm_head(hidden_states)


class TinyCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.layer = nn.Linear(8, 8)
        self.logits_processor = LogitsProcessor()

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.logits_processor(torch.tanh(self.layer(self.embed(input_ids))))


class CudaGraphRunner:
    """Stands for sglang's CudaGraphRunner: static input buffers of size MAX_BS, one capture per batch size."""

    capture_bs = [1, 2, 4, 8, 16, 24, 32, 40]

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.input_ids = torch.zeros(MAX_BS, dtype=torch.long)

    def capture_one_batch_size(self, bs: int) -> torch.Tensor:
        forward_batch = ForwardBatch(batch_size=bs, forward_mode="decode")
        with set_forward_context(forward_batch), torch.no_grad():
            return self.model(self.input_ids)


def build() -> nn.Module:
    return TinyCausalLM()


def step(model: nn.Module, i: int) -> None:
    CudaGraphRunner(model).capture_one_batch_size(CudaGraphRunner.capture_bs[i])
