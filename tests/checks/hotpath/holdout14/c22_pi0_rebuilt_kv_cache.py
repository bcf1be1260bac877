"""Clean: the PI0-style policy after the fix: each denoising step rebuilds a fresh cache from the prefix key/value tensors (`DynamicCache.from_legacy_cache(past_key_values.to_legacy_cache())`) instead of `copy.deepcopy`, which Dynamo traces, so `sample_actions` compiles once with no break. Look-alike of h42 (huggingface/lerobot#3610)."""
from __future__ import annotations


import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import DynamicCache

LABEL = None
SOURCE = "https://github.com/huggingface/lerobot/pull/3610"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

NUM_STEPS = 3


class ExpertLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, h: torch.Tensor, cache: DynamicCache, layer_idx: int) -> torch.Tensor:
        q, k, v = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        k, v = cache.update(k, v, layer_idx)
        att = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
        return h + self.o_proj(att @ v)


class PI0Policy(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.prefix_embed = nn.Linear(dim, dim)
        self.action_in_proj = nn.Linear(dim, dim)
        self.action_out_proj = nn.Linear(dim, dim)
        self.layers = nn.ModuleList([ExpertLayer(dim), ExpertLayer(dim)])

    def embed_prefix(self, images: torch.Tensor) -> DynamicCache:
        cache = DynamicCache()
        h = self.prefix_embed(images)
        for idx, layer in enumerate(self.layers):
            cache.update(layer.k_proj(h), layer.v_proj(h), idx)
        return cache

    def denoise_step(self, x_t: torch.Tensor, past_key_values: DynamicCache) -> torch.Tensor:
        h = self.action_in_proj(x_t)
        for idx, layer in enumerate(self.layers):
            h = layer(h, past_key_values, idx)
        return self.action_out_proj(h)

    def forward(self, images: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:  # sample_actions
        past_key_values = self.embed_prefix(images)
        dt = -1.0 / NUM_STEPS
        x_t = noise
        for _ in range(NUM_STEPS):
            v_t = self.denoise_step(x_t, DynamicCache.from_legacy_cache(past_key_values.to_legacy_cache()))
            x_t = x_t + dt * v_t
        return x_t


def build() -> nn.Module:
    return PI0Policy().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 6, 8), torch.randn(1, 4, 8))
