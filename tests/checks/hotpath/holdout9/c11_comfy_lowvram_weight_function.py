"""Clean: ComfyUI's model patcher re-creates the `weight_function` list of LowVramPatch objects on every new generation, and the compiled Wan attention calls `self.k.weight_function[0]`, which was reported as an id-guard recompile per generation, but on torch 2.13 Dynamo guards the fresh LowVramPatch objects by type and contents (unchanged), so it compiles once. From kijai/ComfyUI-KJNodes#292 (torch compile having to re-compile leads to OOM)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tests.checks.hotpath.holdout9._helpers_b import ModelPatcher

LABEL = None
SOURCE = "https://github.com/kijai/ComfyUI-KJNodes/issues/292"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class CastWeightBiasOp(nn.Linear):
    """comfy.ops.disable_weight_init.Linear: applies `weight_function` patches when casting the weight."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.weight_function: list = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for f in self.weight_function:
            weight = f(weight)
        return F.linear(x, weight, self.bias)


class WanSelfAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q = CastWeightBiasOp(dim, dim)
        self.k = CastWeightBiasOp(dim, dim)
        self.v = CastWeightBiasOp(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q(x), self.k(x), self.v(x)
        return self.o(torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v)


class WanModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = WanSelfAttention()
        self.patcher = None  # set by build(); not a module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.self_attn(x)


def build() -> nn.Module:
    model = WanModel()
    patcher = ModelPatcher(model)
    patcher.add_patches("self_attn.k.weight", torch.randn(2, 8) * 0.01, torch.randn(8, 2) * 0.01, 1.0)
    object.__setattr__(model, "patcher", patcher)
    return model


def step(model: nn.Module, i: int) -> None:
    # each queued prompt: the patcher loads the model (re-creating weight_function), then the sampler runs it
    model.patcher.load()
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
