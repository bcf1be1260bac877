"""Clean: the same TRL GRPO run over a compiled Gemma-3-style model with gradient checkpointing, but the trainer turns the cache off on the config before the model is compiled (`model.config.use_cache = False` when `gradient_checkpointing` is set, as TRL's trainers do), so the forward never reaches the `logger.warning_once` branch and compiles once. Look-alike of h22, from huggingface/trl#3839."""
from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from tests.checks.hotpath.holdout8._helpers_b import modeling_logger as logger

LABEL = None
SOURCE = "https://github.com/huggingface/trl/issues/3839"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Gemma3Config:
    def __init__(self) -> None:
        self.use_cache = True
        self.hidden_size = 8
        self.vocab_size = 16
        self.num_hidden_layers = 2


class Gemma3DecoderLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.self_attn = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = hidden + torch.tanh(self.self_attn(hidden))
        return hidden + self.mlp(torch.nn.functional.gelu(hidden))


class Gemma3TextModel(nn.Module):
    def __init__(self, config: Gemma3Config) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(Gemma3DecoderLayer(config.hidden_size) for _ in range(config.num_hidden_layers))
        self.gradient_checkpointing = False

    def forward(self, input_ids: torch.Tensor, use_cache: bool | None = None) -> torch.Tensor:
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training and use_cache:
            logger.warning_once(
                "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`."
            )
            use_cache = False
        hidden = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = checkpoint(layer, hidden, use_reentrant=False)
            else:
                hidden = layer(hidden)
        return hidden


class Gemma3ForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = Gemma3Config()
        self.model = Gemma3TextModel(self.config)
        self.lm_head = nn.Linear(self.config.hidden_size, self.config.vocab_size, bias=False)

    def gradient_checkpointing_enable(self) -> None:
        self.model.gradient_checkpointing = True

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model(input_ids))


def build() -> nn.Module:
    model = Gemma3ForCausalLM()
    model.gradient_checkpointing_enable()  # GRPOConfig(gradient_checkpointing=True)
    model.config.use_cache = False  # required with gradient checkpointing; set once, before compiling
    return model.train()


def step(model: nn.Module, i: int) -> None:
    completions = torch.randint(0, 16, (2, 6))
    logps = torch.log_softmax(model(completions), dim=-1).gather(-1, completions.unsqueeze(-1))
    (-logps.mean()).backward()
