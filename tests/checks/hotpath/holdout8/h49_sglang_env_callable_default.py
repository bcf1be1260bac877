"""Hazard: SGLang's DeepSeek MoE forward reads a typed environment flag (`envs.SGLANG_DP_USE_REDUCE_SCATTER.get()`) inside the compiled model; the variable is unset, so `get()` falls back to `_resolve_default()`, whose default is an `lru_cache`-wrapped platform probe tested with `callable(...)`. In the report Dynamo failed to trace that call (a hard error under fullgraph piecewise capture, a graph break otherwise); on torch 2.13 it traces through the cache wrapper, and the environment read is baked into the graph. From sgl-project/sglang#36498 (make callable env defaults traceable under torch.compile)."""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

import torch
from torch import nn

LABEL = "env"
SOURCE = "https://github.com/sgl-project/sglang/pull/36498"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 6, "graph_breaks": 3}}  # measured on the H100 machine
LATENT = (
    "torch 2.13 traces the lru_cache-wrapped default (with a warning) instead of breaking as in the report, and the "
    "os.environ read inside the compiled MoE forward becomes a graph constant: exporting the variable later changes "
    "nothing in the compiled model, which the two numbers cannot show"
)


class EnvBool:
    """sglang.srt.environ.EnvField: a typed view of one environment variable with a (possibly callable) default."""

    def __init__(self, default: bool | Callable[[], bool]) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> "EnvBool":
        return self

    def _resolve_default(self) -> bool:
        return self.default() if callable(self.default) else self.default

    def get(self) -> bool:
        value = os.environ.get(self.name)
        if value is None:
            return self._resolve_default()
        return value.lower() in ("1", "true", "yes")


@functools.lru_cache(maxsize=1)
def _default_hip() -> bool:
    return torch.version.hip is not None


class Envs:
    SGLANG_DP_USE_REDUCE_SCATTER = EnvBool(_default_hip)


envs = Envs()


class DeepseekMoE(nn.Module):
    def __init__(self, num_experts: int = 4) -> None:
        super().__init__()
        self.attn_dp_size = 1
        self.gate = nn.Linear(8, num_experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(num_experts))

    def _run_moe_ffn_dp_sync(self, hidden_states: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.gate(hidden_states), dim=-1)
        out = sum(weights[:, e : e + 1] * expert(hidden_states) for e, expert in enumerate(self.experts))
        if envs.SGLANG_DP_USE_REDUCE_SCATTER.get() and self.attn_dp_size > 1:  # attention-DP reduce-scatter path
            out = out / 2
        return out

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self._run_moe_ffn_dp_sync(hidden_states)


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(8)
        self.mlp = DeepseekMoE()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.mlp(self.input_layernorm(hidden_states))


def build() -> nn.Module:
    os.environ.pop("SGLANG_DP_USE_REDUCE_SCATTER", None)  # unset, as in recipes that do not export it
    return DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
