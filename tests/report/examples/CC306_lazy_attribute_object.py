"""CC306: an object whose attributes are computed on every read by its class's `__getattr__` (vLLM's `envs`, lazy
config objects) is walked as the compiled code runs it: an environment read behind it is found, also through a
lambda kept in a dict."""
import os

import torch
from torch import nn


def env_flag(name: str) -> bool:
    return os.environ.get(name, "0") == "1"  # expect: CC306


class Envs:
    getters = {"FUSED_RESIDUAL": lambda: env_flag("FUSED_RESIDUAL")}

    def __getattr__(self, name):
        if name in self.getters:
            return self.getters[name]()
        raise AttributeError(name)


envs = Envs()


class Norm(nn.Module):
    def forward(self, x, residual):
        if envs.FUSED_RESIDUAL:
            return torch.nn.functional.layer_norm(x + residual, (8,))
        return torch.nn.functional.layer_norm(x, (8,)) + residual


def build() -> nn.Module:
    return Norm()
