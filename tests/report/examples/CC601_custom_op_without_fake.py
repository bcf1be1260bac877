"""CC601 example: a block calls a custom op that has no fake implementation (checked by tests/checks/custom_ops/test_custom_ops.py)."""
import torch
from torch import nn


@torch.library.custom_op("cc601_example::fused_gelu", mutates_args=())
def fused_gelu(x: torch.Tensor) -> torch.Tensor:
    return nn.functional.gelu(x)


@torch.library.custom_op("cc601_example::fused_gelu_ok", mutates_args=())
def fused_gelu_ok(x: torch.Tensor) -> torch.Tensor:
    return nn.functional.gelu(x)


@fused_gelu_ok.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.ops.cc601_example.fused_gelu_ok(self.proj(x))
        return torch.ops.cc601_example.fused_gelu(x)  # expect: CC601


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(2))


def build() -> Model:
    return Model()
