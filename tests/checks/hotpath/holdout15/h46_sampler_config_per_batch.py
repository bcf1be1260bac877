"""Hazard: a vLLM-style sampler is compiled (`torch.compile(sampler, dynamic=False)`) and branches on the batch's sampling configuration carried as Python values in `SamplingMetadata`: `all_greedy` (bool) and `top_k` (int or None). The scheduler mixes greedy and top-k requests, so each new configuration the batches bring is a new specialisation of the compiled sampler. From RBLN-SW/vllm-rbln#37 (the torch.compile'd RBLNSampler needs warm-up runs for each unique sampling configuration)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import SamplingMetadata

LABEL = "outside"
SOURCE = "https://github.com/RBLN-SW/vllm-rbln/pull/37"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 0}
REGION = "sampler"


class RBLNSampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampling_metadata: SamplingMetadata | None = None
        self.register_buffer("gumbel", torch.rand(2, 16, generator=torch.Generator().manual_seed(1)))

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        md = self.sampling_metadata
        if md.all_greedy:
            return logits.argmax(dim=-1)
        logits = logits / md.temperature.unsqueeze(1)
        if md.top_k is not None:
            kth = logits.topk(md.top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return (logits - torch.log(-torch.log(self.gumbel))).argmax(dim=-1)


class ModelRunner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 16)
        self.sampler = RBLNSampler()

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.sampler(self.lm_head(hidden))


def build() -> nn.Module:
    return ModelRunner()


# the scheduler's batches over 8 steps: (all greedy?, top_k of the batch)
_BATCHES = [(True, None), (False, 4), (False, 4), (False, 8), (True, None), (False, None), (False, 2), (False, 4)]
_hidden = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    greedy, top_k = _BATCHES[i]
    model.sampler.sampling_metadata = SamplingMetadata(temperature=torch.full((2,), 0.8), all_greedy=greedy, top_k=top_k)
    with torch.no_grad():
        model(_hidden)
