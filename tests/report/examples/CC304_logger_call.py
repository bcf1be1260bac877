"""CC304: a logging.Logger method called on every compiled call; one under a test the scan cannot decide is not
reported (it may never run), nor one under `not is_compiling()`."""
import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


class Logged(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask=None):
        log.info("forward")  # expect: CC304
        if mask is None:
            log.warning("no mask given")
        if not torch.compiler.is_compiling():
            log.debug("eager call")
        return self.proj(x)


def build() -> nn.Module:
    return Logged()
