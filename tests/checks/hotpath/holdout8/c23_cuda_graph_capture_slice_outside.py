"""Clean: the same SGLang-style CUDA-graph capture over batch sizes as h43, but the compiled model always runs the padded static batch and only reads the (unchanging) `forward_mode` from the forward context; the runner drops the padded rows from the output after the call (`logits[:raw_bs]` in replay), so every capture reuses one graph (sgl-project/sglang#9179)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_c import ForwardBatch, get_forward_context, set_forward_context

LABEL = None
SOURCE = "https://github.com/sgl-project/sglang/pull/9179"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

MAX_BS = 48


class LogitsProcessor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 16)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        forward_batch = get_forward_context()
        if forward_batch.forward_mode == "extend":
            hidden_states = hidden_states[-1:]  # prefill keeps the last token only; never taken while capturing decode
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
    capture_bs = [1, 2, 4, 8, 16, 24, 32, 40]

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.input_ids = torch.zeros(MAX_BS, dtype=torch.long)

    def capture_one_batch_size(self, bs: int) -> torch.Tensor:
        forward_batch = ForwardBatch(batch_size=bs, forward_mode="decode")
        with set_forward_context(forward_batch), torch.no_grad():
            logits = self.model(self.input_ids)
        return logits[: forward_batch.batch_size]  # outside the compiled region


def build() -> nn.Module:
    return TinyCausalLM()


def step(model: nn.Module, i: int) -> None:
    CudaGraphRunner(model).capture_one_batch_size(CudaGraphRunner.capture_bs[i])
