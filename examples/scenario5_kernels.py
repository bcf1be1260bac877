"""Scenario 5's opaque kernels: `torch.library.custom_op`s (one with a fake implementation, one without) and blocks.

A real engine's fused kernel is CUDA/Triton; here the kernel body is plain torch so it runs on CPU. What matters to
`torch.compile` is the same: the op is opaque, so tracing needs a fake (meta) implementation to know output shapes.
"""

from __future__ import annotations

import torch
from torch import nn


@torch.library.custom_op("cc_scenarios::fused_gelu_scale", mutates_args=())
def fused_gelu_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    """The opaque kernel (with a fake implementation registered below)."""
    return nn.functional.gelu(x) * scale


@fused_gelu_scale.register_fake
def _fused_gelu_scale_fake(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("cc_scenarios::fused_gelu_scale_nofake", mutates_args=())
def fused_gelu_scale_nofake(x: torch.Tensor, scale: float) -> torch.Tensor:
    """The same kernel, shipped without a fake implementation (the bug)."""
    return nn.functional.gelu(x) * scale


class KernelBlock(nn.Module):
    """Projection, then a few refinement iterations through the custom kernel (fake registered: traceable)."""

    def __init__(self, dim: int = 32, iters: int = 3) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.iters = iters

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        for _ in range(self.iters):
            h = h + torch.ops.cc_scenarios.fused_gelu_scale(h, 0.5)
        return h


class NoFakeKernelBlock(KernelBlock):
    """The same block calling the kernel that has no fake implementation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        for _ in range(self.iters):
            h = h + torch.ops.cc_scenarios.fused_gelu_scale_nofake(h, 0.5)
        return h


class ItemBlock(KernelBlock):
    """The same block reading a host scalar with `.item()` after the kernel loop (a data-dependent graph break).

    Inside a Python loop the same `.item()` is worse: Dynamo skips the whole frame and the region runs eager.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        for _ in range(self.iters):
            h = h + torch.ops.cc_scenarios.fused_gelu_scale(h, 0.5)
        peak = h.abs().max().item()
        return h / max(peak, 1.0)


class KernelModel(nn.Module):
    """Embedding-free two-block model whose blocks are the regions."""

    def __init__(self, block: type[KernelBlock] = KernelBlock) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(block() for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for b in self.blocks:
            x = b(x)
        return x


def build_kernel_model() -> KernelModel:
    """Blocks whose kernel has a fake implementation."""
    torch.manual_seed(0)
    return KernelModel(KernelBlock).eval()


def build_nofake_model() -> KernelModel:
    """Blocks whose kernel has no fake implementation."""
    torch.manual_seed(0)
    return KernelModel(NoFakeKernelBlock).eval()


def build_item_model() -> KernelModel:
    """Blocks with `.item()` in the loop."""
    torch.manual_seed(0)
    return KernelModel(ItemBlock).eval()


def kernel_step(model: nn.Module, i: int) -> torch.Tensor:
    """`step(model, i)`: a fixed-shape batch."""
    gen = torch.Generator().manual_seed(i)
    with torch.no_grad():
        return model(torch.randn(4, 32, generator=gen))
