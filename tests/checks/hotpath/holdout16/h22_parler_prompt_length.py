"""Hazard: a TTS decoder compiled with a static cache is warmed up on prompts of different lengths; every `generate` first runs the prefill with `cache_position = arange(prompt_len + 1)` and then one-token decode steps, so the compiled forward sees cache_position of size 9, then 1 (a size-1 dimension is always specialised), then 5: each new length is a new guard failure (`tensor 'L['cache_position']' size mismatch at index 0. expected 129, actual 1`). From huggingface/parler-tts#93 (static cache: a recompile at each warm-up length, inference slow from the 4th run)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import StaticCache, TinyCausalLM

LABEL = "shape"
SOURCE = "https://github.com/huggingface/parler-tts/issues/93"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}

PROMPT_LENGTHS = (8, 4)  # warm-up prompts of two lengths, as in "Warming up length 128 / 32 tokens"


class ParlerDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.decoder = TinyCausalLM(max_len=16)
        self.cache = StaticCache(num_layers=2, max_cache_len=16)
        self.cache.early_initialization(batch=1, heads=2, head_dim=4, dtype=torch.float32)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        return self.decoder(input_ids, self.cache, cache_position)


class Warmup:
    """generate(): prefill with the prompt + BOS, then decode one token at a time (4 forwards per request)."""

    def __init__(self) -> None:
        self.pos = 0

    def run(self, model: ParlerDecoder, i: int) -> None:
        request, t = divmod(i, 4)
        if t == 0:
            model.cache.reset()
            n = PROMPT_LENGTHS[request % len(PROMPT_LENGTHS)] + 1
            ids = torch.arange(n).remainder(16)[None]
            model(ids, torch.arange(n))
            self.pos = n
        else:
            model(torch.tensor([[t]]), torch.tensor([self.pos]))
            self.pos += 1


_warmup = Warmup()


def build() -> nn.Module:
    _warmup.pos = 0
    return ParlerDecoder().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    _warmup.run(model, i)
