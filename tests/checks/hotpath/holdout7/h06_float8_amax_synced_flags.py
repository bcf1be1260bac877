"""Hazard: float8_experimental's delayed-scaling Float8Linear keeps Python flags on each layer: the compiled forward
lazily initialises the amax on the first call and flips `is_amax_initialized`, checks `amax_and_scale_synced` in its
pre-forward and clears it in its post-forward, while the training loop's `sync_float8_amax_and_scale_history(model)`
sets it back to True on every layer after each optimizer step. The flag values the guards captured on the first call
no longer hold on the second, so every compiled layer recompiles (2 blocks, 4 compiles). From meta-pytorch/float8_experimental#192 (sync
float8 causing graph breaks and cache_size_limit hits under compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import sync_float8_amax_and_scale_history

LABEL = "assigned"
SOURCE = "https://github.com/meta-pytorch/float8_experimental/issues/192"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}

E4M3_MAX_POS = 448.0


class Float8Linear(nn.Linear):
    is_float8_linear = True

    def __init__(self, in_features: int, out_features: int, history_len: int = 4) -> None:
        super().__init__(in_features, out_features)
        self.register_buffer("fp8_amax_x", torch.tensor(E4M3_MAX_POS))
        self.register_buffer("fp8_amax_history_x", torch.zeros(history_len))
        self.register_buffer("fp8_scale_x", torch.tensor(1.0))
        self.is_amax_initialized = False
        self.amax_and_scale_synced = False
        self.enable_pre_and_post_forward = True

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

    def cast_x_to_float8(self, x: torch.Tensor) -> torch.Tensor:
        if not self.is_amax_initialized:  # lazy init of the amax from the first batch
            with torch.no_grad():
                self.fp8_amax_x.copy_(x.abs().max())
        with torch.no_grad():
            self.fp8_amax_history_x.copy_(torch.roll(self.fp8_amax_history_x, 1))
            self.fp8_amax_history_x[0] = x.abs().max()
        return (x * self.fp8_scale_x).clamp(-E4M3_MAX_POS, E4M3_MAX_POS) / self.fp8_scale_x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.float8_pre_forward(x)
        y = nn.functional.linear(self.cast_x_to_float8(x), self.weight, self.bias)
        self.float8_post_forward()
        return y


class FeedForward(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.w1 = Float8Linear(dim, dim)
        self.w2 = Float8Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.silu(self.w1(x)))


class Transformer(nn.Module):
    def __init__(self, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(FeedForward() for _ in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


REGION = "layers.*"  # torchtitan-style per-block compile


def build() -> nn.Module:
    model = Transformer()
    model.optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return model


def step(model: nn.Module, i: int) -> None:
    model.optimizer.zero_grad()
    model(torch.randn(2, 8)).pow(2).mean().backward()
    model.optimizer.step()
    sync_float8_amax_and_scale_history(model)
