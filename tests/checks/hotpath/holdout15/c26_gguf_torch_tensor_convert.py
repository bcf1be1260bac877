"""Clean: the same ComfyUI-GGUF-style quantized Linear, with the fix the report made: the dequantized weight is turned back into a plain tensor with `torch.Tensor(...)` instead of assigning `__class__` (on torch 2.13 `as_subclass(torch.Tensor)` would still break: `Argument of as_subclass must be a non-dispatcher-style tensor subclass`), and the qtype check reads a module-level collection (on torch 2.13 even a set compiles cleanly here). One graph, no break. Twin of h48, from city96/ComfyUI-GGUF#243 (graph breaks from a pre-existing set and from changing the GGMLTensor `__class__`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/city96/ComfyUI-GGUF/pull/243"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

TORCH_COMPATIBLE_QTYPES = {"F32", "F16", "BF16"}


class GGMLTensor(torch.Tensor):
    """Weight storage tagged with its GGUF quantization type."""


def dequantize_tensor(w: torch.Tensor, qtype: str) -> torch.Tensor:
    if qtype in TORCH_COMPATIBLE_QTYPES:
        out = w.detach().clone()
    else:
        out = (w.detach() * 0.5).round() * 2.0  # stand-in for a block dequantizer
    return torch.Tensor(out)  # plain tensor again, built with torch.Tensor (traceable)


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
