"""Hazard: a Granite/Llama model loaded with `config.use_cache=True` and trained with gradient checkpointing hits `if self.gradient_checkpointing and self.training and use_cache: logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing...")` inside the compiled forward on every training step; the logging call graph-breaks the compiled forward, which then runs as two graphs every step. From foundation-model-stack/fms-hf-tuning#531 (use_cache left on triggers the logging statement that causes a graph break)."""
from __future__ import annotations

import functools
import logging

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

LABEL = "graph-break"
SOURCE = "https://github.com/foundation-model-stack/fms-hf-tuning/pull/531"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

logger = logging.getLogger("transformers.models.granite.modeling_granite")


@functools.lru_cache(None)
def _warning_once(self: logging.Logger, *args) -> None:
    self.warning(*args)


logging.Logger.warning_once = _warning_once  # transformers.utils.logging does exactly this


class GraniteConfig:
    hidden_size = 8
    vocab_size = 32
    num_hidden_layers = 2
    use_cache = True  # default from from_pretrained; the tuning script left it on


class GraniteDecoderLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.mlp(h)


class GraniteModel(nn.Module):
    def __init__(self, config: GraniteConfig = GraniteConfig()) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([GraniteDecoderLayer(config.hidden_size) for _ in range(config.num_hidden_layers)])
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.gradient_checkpointing = False
        self._gradient_checkpointing_func = functools.partial(checkpoint, use_reentrant=False)

    def gradient_checkpointing_enable(self) -> None:
        self.gradient_checkpointing = True

    def forward(self, input_ids: torch.Tensor, use_cache: bool | None = None) -> torch.Tensor:
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training and use_cache:
            logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.")
            use_cache = False
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = self._gradient_checkpointing_func(layer.__call__, h)
            else:
                h = layer(h)
        return self.lm_head(h)


def build() -> nn.Module:
    model = GraniteModel()
    model.gradient_checkpointing_enable()  # TrainingArguments(gradient_checkpointing=True)
    model.train()
    return model


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 32, (2, 6))
    logits = model(input_ids)
    loss = nn.functional.cross_entropy(logits.view(-1, 32), input_ids.view(-1))
    loss.backward()
