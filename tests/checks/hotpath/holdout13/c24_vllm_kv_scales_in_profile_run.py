"""Clean: the same vLLM attention with FP8 KV scales, but the engine computes the scales in its eager profile run before the model is compiled (`calculate_kv_scales` becomes False there and never changes again), so the compiled forward never takes the scale branch or writes the attribute and is traced once. Look-alike of vllm-project/vllm#24290."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import AttentionMetadata, get_forward_context, set_forward_context

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/24290"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, dim: int = 8, calculate_kv_scales: bool = True) -> None:
        super().__init__()
        self.calculate_kv_scales = calculate_kv_scales
        self.register_buffer("_k_scale", torch.tensor(1.0))
        self.register_buffer("_v_scale", torch.tensor(1.0))
        self.k_range = self.v_range = 448.0  # fp8_e4m3 max

    def calc_kv_scales(self, key: torch.Tensor, value: torch.Tensor) -> None:
        self._k_scale.copy_(torch.abs(key).max() / self.k_range)
        self._v_scale.copy_(torch.abs(value).max() / self.v_range)
        # We only calculate the scales once
        self.calculate_kv_scales = False

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        if self.calculate_kv_scales:
            attn_metadata = get_forward_context().attn_metadata
            if attn_metadata is not None and attn_metadata.enable_kv_scales_calculation:
                self.calc_kv_scales(key, value)
        k = (key / self._k_scale).clamp(-448, 448) * self._k_scale
        v = (value / self._v_scale).clamp(-448, 448) * self._v_scale
        return F.softmax(query @ k.t(), dim=-1) @ v


class LlamaAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.attn = Attention(dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        return self.o_proj(self.attn(q, k, v))


def build() -> nn.Module:
    model = LlamaAttention()
    # the engine's profile run, eager and before compilation: computes the KV scales once
    profile = AttentionMetadata(num_prefills=1, num_decode_tokens=0, enable_kv_scales_calculation=True)
    with set_forward_context(profile), torch.no_grad():
        model(torch.randn(4, 8))
    return model


def step(model: nn.Module, i: int) -> None:
    # the model runner: prefill and decode batches after the profile run
    prefill = i in (0, 5)
    metadata = AttentionMetadata(
        num_prefills=1 if prefill else 0,
        num_decode_tokens=0 if prefill else 4,
        enable_kv_scales_calculation=prefill,
    )
    with set_forward_context(metadata), torch.no_grad():
        model(torch.randn(4, 8))
