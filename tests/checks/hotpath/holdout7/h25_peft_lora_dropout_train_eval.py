"""Hazard: the PEFT MetaMathQA benchmark compiles the LoRA model for training and runs a periodic evaluation in the same process; `model.eval()` / `model.train()` flip the `training` flag of every `lora_dropout` module the compiled forward reads, so each switch between training and evaluation fails the guard and the forward is compiled again for the other mode. From huggingface/peft#2900 (ENH: Improve torch.compile support in MetaMath: train/eval mismatch recompiles)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/huggingface/peft/pull/2900"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoraLinear(nn.Module):
    """peft.tuners.lora.layer.Linear with one adapter called "default"."""

    def __init__(self, base_layer: nn.Linear, r: int = 4, lora_alpha: int = 8, lora_dropout: float = 0.1) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.active_adapters = ["default"]
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        self.lora_dropout = nn.ModuleDict({"default": nn.Dropout(p=lora_dropout)})
        self.scaling = {"default": lora_alpha / r}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            result = result + lora_B(lora_A(dropout(x))) * scaling
        return result


class PeftModelForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 8)
        self.q_proj = LoraLinear(nn.Linear(8, 8))
        self.v_proj = LoraLinear(nn.Linear(8, 8))
        self.lm_head = nn.Linear(8, 32)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(input_ids)
        h = h + self.v_proj(torch.tanh(self.q_proj(h)))
        return self.lm_head(h)


def build() -> nn.Module:
    model = PeftModelForCausalLM()
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)
    model.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    return model.train()


def step(model: nn.Module, i: int) -> None:
    ids = torch.randint(0, 32, (2, 6))
    if i % 4 == 3:  # eval_steps: greedy evaluation on the validation split
        model.eval()
        with torch.no_grad():
            model(ids)
        model.train()
        return
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 32), ids[:, 1:].reshape(-1))
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()
