"""CC304: a local assigned from Python state in the function's own body (`use_cache = use_cache if use_cache is not
None else self.config.use_cache`) holds that value until it is reassigned, and a parameter the step never passes
holds its default: the branch they decide is known. With the config's flag on, the logger call behind it breaks the
graph on every call; with it off, the same line is not reported (nothing flips the flag)."""
import logging
from types import SimpleNamespace

import torch
from torch import nn

logger = logging.getLogger("example.modeling")


class Decoder(nn.Module):
    def __init__(self, use_cache: bool) -> None:
        super().__init__()
        self.config = SimpleNamespace(use_cache=use_cache)
        self.proj = nn.Linear(8, 8)
        self.gradient_checkpointing = True

    def forward(self, x, use_cache=None):
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and use_cache:
            logger.warning("use_cache=True is incompatible with gradient checkpointing")  # expect: CC304
            use_cache = False
        return self.proj(x)


class Pair(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cached = Decoder(use_cache=True)
        self.plain = Decoder(use_cache=False)

    def forward(self, x):
        return self.cached(x) + self.plain(x)


def build() -> nn.Module:
    return Pair()


def step(model, i):
    with torch.no_grad():
        model(torch.randn(2, 8))
