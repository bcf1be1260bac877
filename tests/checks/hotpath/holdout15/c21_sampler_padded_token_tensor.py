"""Clean: the same vLLM-style compiled sampler, but the model runner pads the per-request generated token ids into a fixed-width tensor outside the compiled region (as upstream vLLM's `make_tensor_with_pad`), and the penalties scatter from that tensor, so the compiled sampler only ever sees tensors of one shape. Twin of h41, from RBLN-SW/vllm-rbln#780 (penalties recompiled because their input was list[list[int]] rather than a torch.Tensor)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import SamplingMetadata, make_padded_token_tensor

LABEL = None
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/780"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

VOCAB = 16
WINDOW = 6


def apply_penalties(logits: torch.Tensor, output_tokens: torch.Tensor, penalty: float) -> torch.Tensor:
    # padded slots hold VOCAB (one past the vocabulary) and land in a spare column that is dropped
    counts = torch.zeros(logits.shape[0], VOCAB + 1, dtype=logits.dtype)
    counts.scatter_add_(1, output_tokens, torch.ones_like(output_tokens, dtype=logits.dtype))
    mask = counts[:, :VOCAB] > 0
    return torch.where(mask, torch.where(logits > 0, logits / penalty, logits * penalty), logits)


class Sampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampling_metadata: SamplingMetadata | None = None

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        md = self.sampling_metadata
        logits = apply_penalties(logits, md.output_token_tensor, md.repetition_penalty)
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
        temperature=torch.ones(2),
        output_token_tensor=make_padded_token_tensor(runner.requests, WINDOW, pad=VOCAB),
        repetition_penalty=1.2,
    )
    with torch.no_grad():
        sampled = runner(_hidden)
    for req, tok in zip(runner.requests, sampled.tolist()):
        req.append(int(tok))
