"""Hazard: Pyramid Attention Broadcast installs a hook object on each attention module whose state counts denoising iterations and caches the last attention output; the compiled transformer reads and bumps `hook.state.iteration` (a Python int on a library object) on every call, so every step fails the guard on the counter and recompiles. From huggingface/diffusers#9562 (Pyramid Attention Broadcast: compatible with torch.compile only if model-level states are not mutated)."""
from __future__ import annotations

import functools

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import PyramidAttentionBroadcastConfig, PyramidAttentionBroadcastHook

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/diffusers/pull/9562"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_qkv(hidden_states).chunk(3, dim=-1)
        return self.to_out(torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn1 = Attention(dim)
        self.ff = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn1(self.norm(hidden_states + temb))
        return hidden_states + self.ff(hidden_states)


class DiTTransformer(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 2) -> None:
        super().__init__()
        self.time_proj = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(TransformerBlock(dim) for _ in range(num_layers))

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        temb = self.time_proj(timestep.view(-1, 1, 1).float())
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, temb)
        return hidden_states


def apply_pyramid_attention_broadcast(model: nn.Module, config: PyramidAttentionBroadcastConfig) -> None:
    """Like diffusers' `apply_pyramid_attention_broadcast`: wrap every self-attention forward with a stateful hook."""
    for name, module in model.named_modules():
        if isinstance(module, Attention) and name.endswith("attn1"):
            hook = PyramidAttentionBroadcastHook(config.spatial_attention_block_skip_range)
            original_forward = module.forward
            module._diffusers_hook = hook
            module.forward = functools.update_wrapper(
                functools.partial(hook.new_forward, module, original_forward), original_forward
            )


def build() -> nn.Module:
    transformer = DiTTransformer()
    apply_pyramid_attention_broadcast(transformer, PyramidAttentionBroadcastConfig(spatial_attention_block_skip_range=2))
    return transformer


_TIMESTEPS = torch.linspace(999, 0, 8).long()


def step(model: nn.Module, i: int) -> None:
    # one denoising step of the pipeline loop: the same latents shape, a new timestep
    latents = torch.randn(1, 4, 8)
    with torch.no_grad():
        model(latents, _TIMESTEPS[i : i + 1])
