"""Hazard: a vLLM-style CPU sampler compiled with torch.compile applies repetition penalties from `sampling_metadata.output_token_ids`, a Python `list[list[int]]` that the model runner extends with every decoded token, so the compiled sampler is re-specialised on the lists' contents every decode step. From RBLN-SW/vllm-rbln#780 (the sampler is recompiled after warm-up because `apply_penalties` takes `list[list[int]]`, not a torch.Tensor, and recompiles whenever its value differs)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import SamplingMetadata

LABEL = "outside"
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/780"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}

VOCAB = 16


def apply_penalties(logits: torch.Tensor, output_token_ids: list[list[int]], penalty: float) -> torch.Tensor:
    # vLLM-style: build a [num_reqs, vocab] mask of tokens already generated, then penalise them
    mask = torch.zeros_like(logits, dtype=torch.bool)
    for row, ids in enumerate(output_token_ids):
        if ids:
            mask[row, ids] = True
    return torch.where(mask, torch.where(logits > 0, logits / penalty, logits * penalty), logits)


class Sampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampling_metadata: SamplingMetadata | None = None

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        md = self.sampling_metadata
        logits = apply_penalties(logits, md.output_token_ids, md.repetition_penalty)
        logits = logits / md.temperature.unsqueeze(1)
        return logits.argmax(dim=-1)


class ModelRunner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, VOCAB)
        self.sampler = Sampler()
        self.requests: list[list[int]] = [[3, 5], [7]]

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.sampler(self.lm_head(hidden))


def build() -> nn.Module:
    return ModelRunner()


REGION = "sampler"
_hidden = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    runner = model
    runner.sampler.sampling_metadata = SamplingMetadata(
        temperature=torch.ones(2), output_token_ids=runner.requests, repetition_penalty=1.2
    )
    with torch.no_grad():
        sampled = runner(_hidden)
    for req, tok in zip(runner.requests, sampled.tolist()):
        req.append(int(tok))
