"""Hazard: a DPO step on a compiled PEFT (LoRA) policy computes the reference log-probs on the same model inside `disable_adapter()`, which flips a Python flag on every LoRA layer that the compiled forward branches on; the flag's guard fails on the first reference pass (and the ref pass also runs under no_grad), so the model recompiles. From pytorch/pytorch#100061 (PEFT: a Python switch read in forward of a compiled model; the compiled graph must follow the switch)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import disable_adapter, inject_lora

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/100061"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        q, v = self.q_proj(h), self.v_proj(h)
        attn = torch.softmax(q @ h.transpose(-1, -2), dim=-1) @ v
        return h + self.mlp(F.silu(h + attn))


class CausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(h)


def build() -> nn.Module:
    return inject_lora(CausalLM(), target_modules=("q_proj", "v_proj"))  # get_peft_model(model, LoraConfig(...))


def _logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.gather(logits.log_softmax(-1), 2, labels[..., None]).squeeze(-1).sum(-1)


def step(model: nn.Module, i: int) -> None:
    """DPOTrainer.compute_loss on one (chosen, rejected) batch, reference model = the policy with adapters off."""
    g = torch.Generator().manual_seed(i)
    input_ids = torch.randint(0, 16, (4, 6), generator=g)  # 2 chosen + 2 rejected, concatenated
    policy_logps = _logps(model(input_ids), input_ids)
    with torch.no_grad(), disable_adapter(model):
        ref_logps = _logps(model(input_ids), input_ids)
    logits = (policy_logps[:2] - policy_logps[2:]) - (ref_logps[:2] - ref_logps[2:])
    (-F.logsigmoid(0.1 * logits)).mean().backward()
