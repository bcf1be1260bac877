"""Clean: the same compiled rejection sampler fed a different number of sequences every engine step, but the runner marks the batch dimension dynamic before the call (`torch._dynamo.mark_dynamic`, what `torch.compile(dynamic=True)` does for the decorated helper), so the first graph is already symbolic in the batch size and is reused for every step. The fix of vllm-project/vllm#10406 (compile `_multinomial` with dynamic=True)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/10406"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

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
    for t in (target, draft):
        torch._dynamo.mark_dynamic(t, 0)
    ids = draft.argmax(-1)
    torch._dynamo.mark_dynamic(ids, 0)
    model(target, draft, ids)
