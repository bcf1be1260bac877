"""Hazard: a LoRA DPO recipe gets reference log-probs by running the same compiled policy inside `with disable_adapter(model):`, a context manager from another module that flips `disabled` on every adapter layer; the flag alternates within each step, so the compiled forward is guarded on it and compiles once per value. From meta-pytorch/torchtune#721 (disabling LoRA with compiled models)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout8._helpers_a import _AdapterModule, disable_adapter, set_trainable_params

LABEL = "outside"
SOURCE = "https://github.com/meta-pytorch/torchtune/issues/721"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoRALinear(nn.Module, _AdapterModule):
    def __init__(self, in_dim: int, out_dim: int, rank: int = 2, alpha: float = 4.0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim) / in_dim**0.5)
        self.lora_a = nn.Linear(in_dim, rank, bias=False)
        self.lora_b = nn.Linear(rank, out_dim, bias=False)
        self.scaling = alpha / rank
        self.disabled = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.linear(x, self.weight)
        if self.disabled:
            return out
        return out + self.lora_b(self.lora_a(x)) * self.scaling


class TinyPolicy(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.q_proj = LoRALinear(dim, dim)
        self.v_proj = LoRALinear(dim, dim)
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok(tokens)
        h = h + self.v_proj(torch.tanh(self.q_proj(h)))
        return self.output(h)


def build() -> nn.Module:
    model = TinyPolicy()
    set_trainable_params(model)
    return model


def _logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2).sum(-1)


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    chosen, rejected = torch.randint(0, 16, (2, 6), generator=g), torch.randint(0, 16, (2, 6), generator=g)
    batch = torch.cat([chosen, rejected])
    policy_logps = _logps(model(batch), batch)
    with disable_adapter(model):
        reference_logps = _logps(model(batch), batch).detach()
    pi, ref = policy_logps.chunk(2), reference_logps.chunk(2)
    loss = -F.logsigmoid(0.1 * ((pi[0] - ref[0]) - (pi[1] - ref[1]))).mean()
    loss.backward()
