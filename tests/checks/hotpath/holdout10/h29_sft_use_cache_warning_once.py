"""Hazard: SFT with gradient checkpointing and a compiled causal LM: the trainer never passes `use_cache`, so the model falls back to `config.use_cache=True` and its forward calls `logger.warning_once("use_cache=True is incompatible with gradient checkpointing...")` inside the compiled region on every training step, so the logging call splits the compiled forward into two graphs. From huggingface/trl#3891 (use_cache should be set in the forward pass to suppress this warning)."""
from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from tests.checks.hotpath.holdout10._helpers_b import get_logger

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/trl/pull/3891"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

logger = get_logger("transformers.models.qwen2.modeling_qwen2")


class Qwen2DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.SiLU(), nn.Linear(16, dim))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.mlp(self.norm(hidden_states))


class Qwen2ForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.config = SimpleNamespace(use_cache=True)
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Qwen2DecoderLayer(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab)
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self) -> None:
        self.gradient_checkpointing = True

    def forward(self, input_ids, labels=None, use_cache=None):
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training and use_cache:
            logger.warning_once(
                "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`."
            )
            use_cache = False
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = checkpoint(layer, hidden_states, use_reentrant=False)
            else:
                hidden_states = layer(hidden_states)
        logits = self.lm_head(hidden_states)
        loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())
        return loss


def build() -> nn.Module:
    model = Qwen2ForCausalLM()
    model.gradient_checkpointing_enable()  # args.gradient_checkpointing=True
    model.train()
    return model


def compute_loss(model, inputs):
    """SFTTrainer.compute_loss before the fix: the inputs go to the model as they come from the collator."""
    return model(**inputs)


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 32, (2, 6), generator=torch.Generator().manual_seed(i))
    loss = compute_loss(model, {"input_ids": input_ids, "labels": input_ids})
    loss.backward()
