"""Hazard: a compiled causal LM carries several LoRA adapters (one per task) and a multi-task evaluation loop calls
`model.set_adapter(task)` before each batch; every LoRA layer looks its A/B modules and scaling up by the active
adapter's name, so each new name fails the guards on that string and the ModuleDict entry, and the model recompiles
once per adapter. From huggingface/peft#2332 (torch.compile tests and docs: loading and switching between multiple
adapters is dynamic and troubles torch.compile; `test_causal_lm_multiple_lora_adapter_compile`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import LoraLinear, add_adapter, set_adapter

LABEL = "outside"
SOURCE = "https://github.com/huggingface/peft/pull/2332"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}

TASKS = ("default", "summarize", "translate", "classify")


class OPTDecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = LoraLinear(nn.Linear(dim, dim))
        self.v_proj = LoraLinear(nn.Linear(dim, dim))
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        h = self.norm(hidden_states)
        attn = torch.softmax(self.q_proj(h) @ h.transpose(-1, -2), dim=-1) @ self.v_proj(h)
        return hidden_states + self.fc(attn)


class PeftModelForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(32, 8)
        self.layers = nn.ModuleList([OPTDecoderLayer() for _ in range(2)])
        self.lm_head = nn.Linear(8, 32)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(h)

    def set_adapter(self, adapter_name: str) -> None:
        set_adapter(self, adapter_name)


def build() -> nn.Module:
    model = PeftModelForCausalLM()
    for task in TASKS[1:]:
        add_adapter(model, task)  # model.load_adapter(path, adapter_name=task)
    return model


def step(model: nn.Module, i: int) -> None:
    task = TASKS[i % len(TASKS)]
    model.set_adapter(task)
    with torch.no_grad():
        model(torch.randint(0, 32, (2, 6)))
