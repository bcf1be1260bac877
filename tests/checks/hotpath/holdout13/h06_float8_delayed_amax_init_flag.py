"""Hazard: a float8 linear with delayed scaling lazily initialises its amax/scale buffers on the first forward (`_maybe_initialize_amaxes_scales_for_float8_cast`) and its post-forward flips the Python flags `is_amax_initialized = True` / `amax_and_scale_synced = False` on the module, while the training loop's `sync_float8_amax_and_scale_history` sets `amax_and_scale_synced = True` again every step, so the compiled forward sees changed module flags after its first call and recompiles. From pytorch/torchtitan#698 (fix float8 delayed scaling configuration: `enable_pre_and_post_forward` and the init path taken every iteration)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_a import E4M3_MAX_POS, amax_to_scale, sync_float8_amax_and_scale_history

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/torchtitan/pull/698"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Float8Linear(nn.Linear):
    is_float8_linear = True

    def __init__(self, in_features: int, out_features: int, history_len: int = 4, enable_pre_and_post_forward: bool = True) -> None:
        super().__init__(in_features, out_features)
        self.register_buffer("fp8_amax_input", torch.tensor([E4M3_MAX_POS]))
        self.register_buffer("fp8_amax_history_input", torch.zeros(history_len))
        self.register_buffer("fp8_scale_input", torch.tensor([1.0]))
        self.is_amax_initialized = False
        self.amax_and_scale_synced = False
        self.enable_pre_and_post_forward = enable_pre_and_post_forward

    def _maybe_initialize_amaxes_scales_for_float8_cast(self, x: torch.Tensor) -> None:
        if self.is_amax_initialized:
            return
        with torch.no_grad():
            new_amax = x.abs().max()
            self.fp8_amax_input.fill_(new_amax)
            self.fp8_amax_history_input[0] = new_amax
            self.fp8_scale_input.copy_(amax_to_scale(new_amax))

    def float8_pre_forward(self, x: torch.Tensor) -> None:
        if not self.enable_pre_and_post_forward:
            return
        if self.is_amax_initialized and not self.amax_and_scale_synced:
            raise AssertionError("amaxes and scales not synced, please call `sync_float8_amax_and_scale_history` before forward")

    def float8_post_forward(self) -> None:
        if not self.enable_pre_and_post_forward:
            return
        self.is_amax_initialized = True
        self.amax_and_scale_synced = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.float8_pre_forward(x)
        self._maybe_initialize_amaxes_scales_for_float8_cast(x)
        x_scaled = (x * self.fp8_scale_input).clamp(-E4M3_MAX_POS, E4M3_MAX_POS) / self.fp8_scale_input
        with torch.no_grad():
            self.fp8_amax_history_input[0] = x.abs().max()
        out = nn.functional.linear(x_scaled, self.weight, self.bias)
        self.float8_post_forward()
        return out


class FeedForward(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.w1 = Float8Linear(dim, 2 * dim)
        self.w2 = Float8Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.silu(self.w1(x)))


def build() -> nn.Module:
    return FeedForward()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
    sync_float8_amax_and_scale_history(model)  # train loop: after backward, before the next forward
