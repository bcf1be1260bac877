"""Clean: the rotary embedding computes its frequencies inside `maybe_autocast(device_type, enabled=False)`, a helper that enters `torch.autocast` only when it has an effect; the context manager is traced in the graph and the model compiles once, from huggingface/transformers#42747 (Only call torch.autocast if it will have an effect)."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/42747"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def maybe_autocast(device_type: str, dtype: torch.dtype | None = None, enabled: bool = True):
    if torch.is_autocast_enabled(device_type) or enabled:
        return torch.autocast(device_type, dtype=dtype, enabled=enabled)
    return contextlib.nullcontext()


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim), persistent=False)
        self.attention_scaling = 1.0

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        with maybe_autocast(device_type=x.device.type, enabled=False):  # force float32
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos() * self.attention_scaling
            sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


class LlamaLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.rotary_emb = LlamaRotaryEmbedding()

    def forward(self, hidden_states: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        cos, sin = self.rotary_emb(hidden_states, position_ids)
        q = self.q_proj(hidden_states)
        return q * cos + q.flip(-1) * sin


def build() -> nn.Module:
    return LlamaLayer()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 6, 8), torch.arange(6)[None])
