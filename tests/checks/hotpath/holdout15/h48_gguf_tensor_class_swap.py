"""Hazard: a ComfyUI-GGUF-style quantized Linear keeps its weight as a `GGMLTensor` subclass and, inside forward, dequantizes it and converts the result back to a plain tensor by assigning `tensor.__class__ = torch.Tensor`; Dynamo cannot trace the `__class__` assignment, so every compiled layer breaks its graph there (the qtype check against a module-level set, the report's other break, traces cleanly on torch 2.13). From city96/ComfyUI-GGUF#243 (two sources of graph breaks under torch.compile: a pre-existing set used in the compiled region, and changing the `__class__` attribute of the GGMLTensor instead of converting it with torch.Tensor)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/city96/ComfyUI-GGUF/pull/243"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 5}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 9, "graph_breaks": 6}, "2.12": {"compiles_over_8_steps": 9, "graph_breaks": 6}}  # 2.11: measured on torch 2.11.0+cu130 (CPU tensors); 2.12 measured on the CPU-only machine (2.12.1+cu130)

TORCH_COMPATIBLE_QTYPES = {"F32", "F16", "BF16"}


class GGMLTensor(torch.Tensor):
    """Weight storage tagged with its GGUF quantization type."""


def dequantize_tensor(w: torch.Tensor, qtype: str) -> torch.Tensor:
    if qtype in TORCH_COMPATIBLE_QTYPES:
        out = w.detach().clone()
    else:
        out = (w.detach() * 0.5).round() * 2.0  # stand-in for a block dequantizer
    out.__class__ = torch.Tensor  # back to a plain tensor before F.linear
    return out


class GGMLLinear(nn.Linear):
    def __init__(self, dim: int, qtype: str) -> None:
        super().__init__(dim, dim)
        self.qtype = qtype
        self.weight = nn.Parameter(self.weight.detach().as_subclass(GGMLTensor), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, dequantize_tensor(self.weight, self.qtype), self.bias)


class FluxMLP(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.fc1 = GGMLLinear(dim, "Q8_0")
        self.fc2 = GGMLLinear(dim, "F16")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


def build() -> nn.Module:
    return FluxMLP()


_x = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(_x)
