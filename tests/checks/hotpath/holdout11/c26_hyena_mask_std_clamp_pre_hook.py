"""Clean: a Hyena/CCNN Gaussian mask's forward pre-hook clamps the learnable `std_param` in place under `torch.no_grad()` before every forward; on torch 2.13 the compiled training block traces the hook's tensor-only clamp into its one graph (no Python state changes), so it compiles once with no break. Reported as a compile problem in NVIDIA-BioNeMo/nvSubquadratic#23 (the fix there put `@torch.compiler.disable` on the pre-hook); it no longer misbehaves here."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/NVIDIA-BioNeMo/nvSubquadratic/pull/23"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GaussianMaskND(nn.Module):
    def __init__(self, length: int = 8, min_std: float = 0.05, max_std: float = 1.0) -> None:
        super().__init__()
        self.min_std = min_std
        self.max_std = max_std
        self.std_param = nn.Parameter(torch.full((1,), 0.5))
        self.register_buffer("positions", torch.linspace(-1, 1, length))
        self.register_forward_pre_hook(self._clamp_direct_std_param_pre_hook)

    def _clamp_direct_std_param_pre_hook(self, module, inputs):
        """Clamp std_param into [min_std, max_std] just before forward without tracking grads."""
        with torch.no_grad():
            self.std_param.clamp_(self.min_std, self.max_std)

    def forward(self, kernel: torch.Tensor) -> torch.Tensor:
        mask = torch.exp(-0.5 * (self.positions / self.std_param) ** 2)
        return kernel * mask


class CCNNBlock(nn.Module):
    def __init__(self, channels: int = 8, length: int = 8) -> None:
        super().__init__()
        self.kernel = nn.Parameter(torch.randn(channels, length) * 0.1)
        self.mask = GaussianMaskND(length)
        self.proj = nn.Linear(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, length, channels)
        k = self.mask(self.kernel)  # (channels, length)
        y = torch.fft.irfft(torch.fft.rfft(x.transpose(1, 2), n=16) * torch.fft.rfft(k, n=16), n=16)[..., : x.shape[1]]
        return x + self.proj(y.transpose(1, 2))


def build() -> nn.Module:
    return CCNNBlock()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(2, 8, 8)).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None
