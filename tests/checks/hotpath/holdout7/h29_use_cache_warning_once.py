"""Hazard: SFT with `gradient_checkpointing=True` and `torch_compile=True` leaves `use_cache=True` in the model config, so every compiled training forward of the Llama/Granite model reaches `logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing...")` before forcing `use_cache=False`; Dynamo does not trace the `logging.Logger` call behind transformers' `lru_cache`-wrapped `warning_once`, so the training forward is split there on every step. From foundation-model-stack/fms-hf-tuning#516 (set use_cache=false while model loading to prevent graph break)."""
from __future__ import annotations

from functools import partial

import torch
import torch.utils.checkpoint
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import get_logger

LABEL = "graph-break"
SOURCE = "https://github.com/foundation-model-stack/fms-hf-tuning/pull/516"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

logger = get_logger("transformers.models.granite.modeling_granite")


class GraniteConfig:
    vocab_size = 32
    hidden_size = 8
    num_hidden_layers = 2
    use_cache = True


class GraniteDecoderLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states):
        return hidden_states + self.mlp(self.norm(hidden_states))


class GraniteForCausalLM(nn.Module):
    def __init__(self, config: GraniteConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(GraniteDecoderLayer(config.hidden_size) for _ in range(config.num_hidden_layers))
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self) -> None:
        self._gradient_checkpointing_func = partial(torch.utils.checkpoint.checkpoint, use_reentrant=False)
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
                hidden_states = self._gradient_checkpointing_func(layer.__call__, hidden_states)
            else:
                hidden_states = layer(hidden_states)
        logits = self.lm_head(hidden_states)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return loss


def build() -> nn.Module:
    model = GraniteForCausalLM(GraniteConfig())  # loaded without use_cache=False
    model.gradient_checkpointing_enable()
    model.optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    return model.train()


def step(model: nn.Module, i: int) -> None:
    ids = torch.randint(0, 32, (2, 8))
    loss = model(ids, labels=ids)
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()
