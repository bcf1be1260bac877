"""Hazard: float8 weights with dynamic scaling under FSDP2: the first iteration computes the weight scale inside the compiled forward (no precomputed scale yet), then after `optimizer.step()` the loop calls `precompute_float8_dynamic_scale_for_fsdp(model)`, which stores a `[[s]]`-shaped scale tensor on every float8 linear; the guard `precomputed_scale is None` fails and the forward recompiles for the other branch. From meta-pytorch/float8_experimental#321 (FSDP2 + torch.compile(transformer block): scale is a scalar in iteration 1 and `tensor([[4674.8633]])` in iteration 2)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_a import E4M3_MAX_POS, amax_to_scale, precompute_float8_dynamic_scale_for_fsdp

LABEL = "outside"
SOURCE = "https://github.com/meta-pytorch/float8_experimental/pull/321"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


def cast_to_float8_e4m3_dynamic(t: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (t * scale).clamp(-E4M3_MAX_POS, E4M3_MAX_POS) / scale


class Float8Linear(nn.Linear):
    is_float8_linear = True

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features, bias=False)
        self.precomputed_scale = None

    def cast_weight_to_float8(self) -> torch.Tensor:
        if self.precomputed_scale is not None:
            scale = self.precomputed_scale
        else:
            scale = amax_to_scale(self.weight.abs().max())
        return cast_to_float8_e4m3_dynamic(self.weight, scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_fp8 = cast_to_float8_e4m3_dynamic(x, amax_to_scale(x.abs().max()))
        return nn.functional.linear(x_fp8, self.cast_weight_to_float8())


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.wq = Float8Linear(dim, dim)
        self.w1 = Float8Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.wq(self.norm(x))
        return h + self.w1(torch.relu(h))


def build() -> nn.Module:
    model = TransformerBlock()
    model._optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
    model._optimizer.step()
    model._optimizer.zero_grad()
    precompute_float8_dynamic_scale_for_fsdp(model)
