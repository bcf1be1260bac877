"""Hazard: TRL's DPO trainer with a PEFT LoRA policy computes the reference log-probs by running the same compiled model inside `model.disable_adapter()`, which flips `_disable_adapters` on every LoRA layer (and runs under no_grad); the policy and reference passes alternate every step, so the compiled model is guarded on the adapter flag and grad mode and holds extra graphs for the reference pass (on torch 2.13 three in all: the flag first lives on the class, then on each layer). From huggingface/peft#1725 (torch.compile tests: disabling adapters listed as not compatible with compile)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tests.checks.hotpath.holdout11._helpers_b import PeftLoraLinear, PeftModel

LABEL = "outside"
SOURCE = "https://github.com/huggingface/peft/pull/1725"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = PeftLoraLinear(nn.Linear(dim, dim))
        self.v_proj = PeftLoraLinear(nn.Linear(dim, dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + torch.tanh(self.q_proj(h)) * self.v_proj(h)


class CausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.embed_tokens.weight.requires_grad_(False)
        self.lm_head.weight.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(h)


def build() -> nn.Module:
    return PeftModel(CausalLM())


def _logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.gather(logits[:, :-1].log_softmax(-1), 2, labels[:, 1:, None]).squeeze(2).sum(-1)


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    concatenated = torch.randint(0, 32, (4, 6), generator=g)  # chosen + rejected, concatenated_forward
    policy_logps = _logps(model(concatenated), concatenated)
    with torch.no_grad(), model.disable_adapter():  # DPOTrainer.null_ref_context()
        ref_logps = _logps(model(concatenated), concatenated)
    chosen, rejected = (policy_logps - ref_logps).chunk(2)
    loss = -F.logsigmoid(0.1 * (chosen - rejected)).mean()
    loss.backward()
