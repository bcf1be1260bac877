"""CC310: a generation loop keeps its cache object in a dict of model kwargs and advances the Python int the cache
holds after every step (`cache = model_kwargs.get("cache_params"); cache.seqlen_offset += 1`); the compiled forward
branches on it. An int on a plain object is specialized once, then Dynamo's automatic dynamic shapes make it a
symbol (one recompile: a warning), where an int on a module keeps being specialized (a recompile every step: an
error)."""
import torch
from torch import nn


class Cache:
    def __init__(self) -> None:
        self.seqlen_offset = 0
        self.states = torch.zeros(1, 8)


def advance(model_kwargs: dict, n: int) -> None:
    cache = model_kwargs.get("cache_params")
    if cache is not None:
        cache.seqlen_offset += n  # expect: CC310 warning


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.steps = 0

    def forward(self, x, cache_params=None):
        y = self.proj(x)
        if cache_params is not None and cache_params.seqlen_offset > 0:
            y = y + cache_params.states
        if self.steps > 0:
            y = y * 2
        return y


def build() -> nn.Module:
    model = Decoder()
    model.generation_kwargs = {"cache_params": Cache()}
    return model


def step(model, i):
    with torch.no_grad():
        model(torch.randn(1, 8), cache_params=model.generation_kwargs["cache_params"])
    advance(model.generation_kwargs, 1)
    model.steps += 1  # expect: CC310
