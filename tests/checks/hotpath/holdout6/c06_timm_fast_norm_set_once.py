"""Clean: a timm-style ConvNeXt whose LayerNorm2d layers read the module-level fast-norm switch
(`timm.layers.fast_norm.set_fast_norm`) once at construction and query the autocast state (`is_autocast_enabled`,
`get_autocast_dtype`, a nested `autocast(enabled=False)`) on every forward; the switch is set once before the model
is created and never touched again, and the autocast queries trace on torch 2.13, so the model compiles once with no
graph break (the report saw 48 graph breaks in convnext_tiny with fast norm on torch 2.0). From
pytorch/pytorch#97084 (timm models instantiated using timm's fast norm layer trigger graph breaks)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6 import _helpers_a as fast_norm

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/97084"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LayerNorm2d(nn.LayerNorm):
    """timm.layers.norm.LayerNorm2d: channels-first LayerNorm with the optional fast-norm path."""

    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__(num_channels, eps=eps)
        self.fast_norm = fast_norm.is_fast_norm()  # read once at construction, like timm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        if self.fast_norm:
            x = fast_norm.fast_layer_norm(x, list(self.normalized_shape), self.weight, self.bias, self.eps)
        else:
            x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = LayerNorm2d(dim)
        self.mlp = nn.Sequential(nn.Conv2d(dim, 4 * dim, 1), nn.GELU(), nn.Conv2d(4 * dim, dim, 1))
        self.gamma = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(self.conv_dw(x))) * self.gamma[:, None, None]


class ConvNeXt(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 2, num_classes: int = 4) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 4, stride=4), LayerNorm2d(dim))
        self.stages = nn.Sequential(*(ConvNeXtBlock(dim) for _ in range(depth)))
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stages(self.stem(x)).mean((2, 3)))


def build() -> nn.Module:
    fast_norm.set_fast_norm(enable=True)  # set once, before timm.create_model(...) and compiling
    return ConvNeXt()


def step(model: nn.Module, i: int) -> None:
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(torch.randn(2, 3, 16, 16))
    F.cross_entropy(logits.float(), torch.tensor([0, 1])).backward()
