"""Hazard: a LoRA-loaded UNet is compiled and the LoRA strength is passed per call as `cross_attention_kwargs={"scale": lora_scale}`; every attention block reads `lora_scale = cross_attention_kwargs.get("scale", 1.0)` and multiplies the LoRA branch by that Python float, so a UI that sweeps the strength hands the compiled forward a new float each call: the first value is specialised into the graph and the second forces a recompile with the float made dynamic. From huggingface/diffusers#3660 (`torch.compile` not working with LoRA: the compiled UNet with a LoRA scale in `cross_attention_kwargs`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/huggingface/diffusers/issues/3660"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoRACompatibleLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, rank: int = 2) -> None:
        super().__init__(in_features, out_features)
        self.lora_down = nn.Linear(in_features, rank, bias=False)
        self.lora_up = nn.Linear(rank, out_features, bias=False)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        out = super().forward(x)
        if self.lora_up is None:  # fused
            return out
        return out + scale * self.lora_up(self.lora_down(x))

    def fuse_lora(self, lora_scale: float = 1.0) -> None:
        with torch.no_grad():
            self.weight += lora_scale * (self.lora_up.weight @ self.lora_down.weight)
        self.lora_down = None
        self.lora_up = None


class CrossAttention(nn.Module):
    def __init__(self, dim: int, ctx_dim: int) -> None:
        super().__init__()
        self.to_q = LoRACompatibleLinear(dim, dim)
        self.to_k = LoRACompatibleLinear(ctx_dim, dim)
        self.to_v = LoRACompatibleLinear(ctx_dim, dim)
        self.to_out = LoRACompatibleLinear(dim, dim)

    def forward(self, hidden_states, encoder_hidden_states, cross_attention_kwargs=None):
        lora_scale = cross_attention_kwargs.get("scale", 1.0) if cross_attention_kwargs is not None else 1.0
        q = self.to_q(hidden_states, lora_scale)
        k = self.to_k(encoder_hidden_states, lora_scale)
        v = self.to_v(encoder_hidden_states, lora_scale)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.to_out(attn @ v, lora_scale)


class TinyUNet2DCondition(nn.Module):
    def __init__(self, dim: int = 8, ctx_dim: int = 8) -> None:
        super().__init__()
        self.proj_in = nn.Linear(4, dim)
        self.attn1 = CrossAttention(dim, ctx_dim)
        self.attn2 = CrossAttention(dim, ctx_dim)
        self.proj_out = nn.Linear(dim, 4)

    def forward(self, sample, encoder_hidden_states, cross_attention_kwargs=None):
        h = self.proj_in(sample)
        h = h + self.attn1(h, encoder_hidden_states, cross_attention_kwargs)
        h = h + self.attn2(h, encoder_hidden_states, cross_attention_kwargs)
        return self.proj_out(h)


def build() -> nn.Module:
    return TinyUNet2DCondition().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    lora_scale = 0.25 + 0.125 * i  # strength slider moved between generations
    model(torch.randn(1, 6, 4), torch.randn(1, 5, 8), cross_attention_kwargs={"scale": lora_scale})
