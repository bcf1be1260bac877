"""CC310 from a step decorated with `@torch.no_grad()` (an inference loop): the scan reads the function the decorator
wraps, so its index still changes the values it passes: a LoRA strength swept per call and handed in a kwargs dict
to the attention blocks that read it (`cross_attention_kwargs.get("scale", 1.0)`): the first value is baked into the
graph, the second recompiles. The dict's constant entry is not reported."""
from __future__ import annotations

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.lora = nn.Linear(8, 8, bias=False)

    def forward(self, h, cross_attention_kwargs=None):
        kwargs = cross_attention_kwargs or {}
        return self.proj(h) + kwargs.get("scale", 1.0) * self.lora(h) * kwargs.get("gate", 1.0)


class UNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()

    def forward(self, sample, cross_attention_kwargs=None):
        return sample + self.attn(sample, cross_attention_kwargs)


def build() -> nn.Module:
    return UNet().eval()


@torch.no_grad()
def step(model, i):
    scale = 0.25 + 0.125 * i
    model(torch.randn(2, 8), cross_attention_kwargs={"gate": 0.5, "scale": scale})  # expect: CC310 warning
