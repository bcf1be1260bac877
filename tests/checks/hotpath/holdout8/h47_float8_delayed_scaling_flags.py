"""Hazard: float8_experimental's Float8Linear with delayed scaling keeps a per-module state machine in Python flags: forward initialises the amaxes on the first call and sets `is_amax_initialized = True` / `amax_and_scale_synced = False`, and the training loop's `sync_float8_amax_and_scale_history(model)` sets `amax_and_scale_synced = True` on every Float8Linear after backward; the compiled forward guards on both flags, so the second iteration recompiles. From meta-pytorch/float8_experimental#207 (torch.compile() not working with Float8Linear)."""
from __future__ import annotations

import dataclasses

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/meta-pytorch/float8_experimental/issues/207"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

E4M3_MAX = 448.0


@dataclasses.dataclass(frozen=True)
class Float8LinearConfig:
    enable_amax_init: bool = True
    enable_pre_and_post_forward: bool = True


def amax_to_scale(amax: torch.Tensor) -> torch.Tensor:
    return E4M3_MAX / torch.clamp(amax, min=1e-12)


def cast_to_float8_emulated(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x * scale, -E4M3_MAX, E4M3_MAX).round() / scale


def _maybe_initialize_amaxes_scales_for_float8_cast(x, cur_amax, amax_history, scale, is_initialized) -> None:
    if is_initialized:
        return
    with torch.no_grad():
        new_amax = x.abs().max()
        cur_amax.fill_(new_amax)
        amax_history[0] = new_amax
        scale.copy_(amax_to_scale(new_amax))


class Float8Linear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, config: Float8LinearConfig) -> None:
        super().__init__(in_features, out_features)
        self.config = config
        self.is_amax_initialized = not config.enable_amax_init
        self.amax_and_scale_synced = False
        self.enable_pre_and_post_forward = config.enable_pre_and_post_forward
        for name in ("x", "w"):
            self.register_buffer(f"fp8_amax_{name}", torch.tensor([E4M3_MAX]))
            self.register_buffer(f"fp8_amax_history_{name}", torch.zeros(16))
            self.register_buffer(f"fp8_scale_{name}", torch.tensor([1.0]))

    def float8_pre_forward(self, x: torch.Tensor) -> None:
        if not self.enable_pre_and_post_forward:
            return
        if self.is_amax_initialized and (not self.amax_and_scale_synced) and torch.is_grad_enabled():
            raise AssertionError("amax and scale history need to be synced once per iteration")
        self.amax_and_scale_synced = False

    def float8_post_forward(self) -> None:
        if not self.enable_pre_and_post_forward:
            return
        self.is_amax_initialized = True
        self.amax_and_scale_synced = False

    def cast_to_float8(self, t: torch.Tensor, name: str) -> torch.Tensor:
        amax, history, scale = (getattr(self, f"fp8_{k}_{name}") for k in ("amax", "amax_history", "scale"))
        _maybe_initialize_amaxes_scales_for_float8_cast(t, amax, history, scale, self.is_amax_initialized)
        with torch.no_grad():
            amax.fill_(t.detach().abs().max())  # delayed scaling: record this iteration's amax for the next sync
        return t + (cast_to_float8_emulated(t, scale) - t).detach()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.float8_pre_forward(x)
        x_fp8 = self.cast_to_float8(x, "x")
        w_fp8 = self.cast_to_float8(self.weight, "w")
        y = torch.nn.functional.linear(x_fp8, w_fp8, self.bias)
        self.float8_post_forward()
        return y


@torch.no_grad()
def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    for child in model.modules():
        if not isinstance(child, Float8Linear):
            continue
        for name in ("x", "w"):
            history = getattr(child, f"fp8_amax_history_{name}")
            history.copy_(torch.roll(history, 1))
            history[0] = getattr(child, f"fp8_amax_{name}")[0]
            getattr(child, f"fp8_scale_{name}").copy_(amax_to_scale(history.max()))
        child.amax_and_scale_synced = True


class MLP(nn.Module):
    def __init__(self, config: Float8LinearConfig) -> None:
        super().__init__()
        self.fc1 = Float8Linear(8, 16, config)
        self.fc2 = Float8Linear(16, 8, config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Trainer:
    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)

    def train_step(self, x: torch.Tensor) -> None:
        loss = self.model(x).pow(2).mean()
        loss.backward()
        sync_float8_amax_and_scale_history(self.model)
        self.optimizer.step()
        self.optimizer.zero_grad()


def build() -> nn.Module:
    model = MLP(Float8LinearConfig())
    model.trainer = Trainer(model)  # plain attribute, not a submodule
    return model


def step(model: nn.Module, i: int) -> None:
    model.trainer.train_step(torch.randn(4, 8))
