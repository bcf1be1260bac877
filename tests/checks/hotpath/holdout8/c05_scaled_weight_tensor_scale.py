"""Clean: the same scaled-weight linear, but the scale is kept as a 0-d tensor and flattened as an inner tensor of the subclass (as torchao's Float8Tensor does), so only constant metadata is guarded and the compiled matmul compiles once while the scale changes every step. Look-alike of h05, from pytorch/pytorch#114405."""
from __future__ import annotations

import torch
import torch.utils._pytree as pytree
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/114405"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ScaledTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, data: torch.Tensor, scale: torch.Tensor) -> "ScaledTensor":
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype, device=data.device)

    def __init__(self, data: torch.Tensor, scale: torch.Tensor) -> None:
        self._data = data
        self._scale = scale

    def __tensor_flatten__(self):
        return ["_data", "_scale"], None

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return ScaledTensor(inner["_data"], inner["_scale"])

    def __repr__(self) -> str:
        return "ScaledTensor()"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t._data * t._scale  # noqa: E731
        return func(*pytree.tree_map_only(ScaledTensor, unwrap, args), **pytree.tree_map_only(ScaledTensor, unwrap, kwargs or {}))


def cast_to_scaled(w: torch.Tensor) -> ScaledTensor:
    amax = w.detach().abs().max()
    return ScaledTensor(w.detach() / amax, amax)


class ScaledMatmul(nn.Module):
    def forward(self, x: torch.Tensor, w_scaled: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, w_scaled, bias)


class Float8StyleLinear(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim) / dim**0.5)
        self.bias = nn.Parameter(torch.zeros(dim))
        self.mm = ScaledMatmul()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mm(x, cast_to_scaled(self.weight), self.bias)


REGION = "mm"


def build() -> nn.Module:
    return Float8StyleLinear()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
        model.weight.mul_(1.05)
