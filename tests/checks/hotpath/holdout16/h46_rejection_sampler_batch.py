"""Hazard: the speculative-decoding rejection sampler (Gumbel-style `_multinomial`: `probs.div_(q.exponential_()).argmax()`) moved from `torch.jit.script` to a plain `torch.compile`; the number of sequences being verified changes from one engine step to the next, so the second step already fails the static batch-size guard and recompiles. From vllm-project/vllm#10406 (torch.jit.script -> torch.compile: "otherwise torch.compile triggers re-compilation after the very first run", fixed by compiling with dynamic=True)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/vllm-project/vllm/pull/10406"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

_BATCH = [3, 5, 2, 6, 4, 7, 3, 5]


class RejectionSampler(nn.Module):
    """Accepts draft tokens with probability min(1, p/q) and samples recovered tokens from (p - q)+."""

    def __init__(self, vocab: int = 16) -> None:
        super().__init__()
        self.vocab = vocab

    @staticmethod
    def _multinomial(probs: torch.Tensor) -> torch.Tensor:
        q = torch.empty_like(probs).exponential_(1.0)
        return probs.div(q).argmax(dim=-1)

    def forward(self, target_probs: torch.Tensor, draft_probs: torch.Tensor, draft_ids: torch.Tensor) -> torch.Tensor:
        p = target_probs.gather(-1, draft_ids.unsqueeze(-1)).squeeze(-1)
        q = draft_probs.gather(-1, draft_ids.unsqueeze(-1)).squeeze(-1)
        accepted = torch.rand_like(p) < (p / q).clamp(max=1.0)
        recovered = self._multinomial((target_probs - draft_probs).clamp(min=0.0) + 1e-9)
        return torch.where(accepted, draft_ids, recovered)


def build() -> nn.Module:
    return RejectionSampler()


def step(model: nn.Module, i: int) -> None:
    n = _BATCH[i]  # sequences in this engine step (each with 3 draft tokens)
    target = torch.randn(n, 3, 16).softmax(-1)
    draft = torch.randn(n, 3, 16).softmax(-1)
    model(target, draft, draft.argmax(-1))
