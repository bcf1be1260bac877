"""Clean: the UNet's forward decides whether to forward an explicit upsample size with `any(s % default_overall_up_factor != 0 for s in sample.shape[-2:])` and adds T2I-Adapter residuals popped from a list; reported as graph breaks ("torch.compile() fails to compile these kinds of iterators", huggingface/diffusers#5453), but on torch 2.13 Dynamo traces the generator over static sizes and the list pops, so the compiled UNet is one graph compiled once over the denoising loop."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/5453"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class UNet2DConditionModel(nn.Module):
    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.num_upsamplers = 1
        self.conv_in = nn.Conv2d(4, channels, 3, padding=1)
        self.time_proj = nn.Linear(1, channels)
        self.down = nn.Conv2d(channels, channels, 3, stride=2, padding=1)
        self.mid = nn.Conv2d(channels, channels, 3, padding=1)
        self.up = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv_out = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states, down_intrablock_additional_residuals=None):
        default_overall_up_factor = 2**self.num_upsamplers
        forward_upsample_size = False
        upsample_size = None
        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            # Forward upsample size to force interpolation output size.
            forward_upsample_size = True
        emb = self.time_proj(timestep.reshape(-1, 1).float())[:, :, None, None]
        h = self.conv_in(sample) + emb
        is_adapter = down_intrablock_additional_residuals is not None
        skip = h
        h = self.down(h)
        if is_adapter and len(down_intrablock_additional_residuals) > 0:
            h = h + down_intrablock_additional_residuals.pop(0)
        h = self.mid(h) + encoder_hidden_states.mean()
        if forward_upsample_size:
            upsample_size = skip.shape[2:]
        h = nn.functional.interpolate(h, size=upsample_size, scale_factor=None if upsample_size else 2.0, mode="nearest")
        return self.conv_out(self.up(h + skip))


def build() -> nn.Module:
    _ADAPTER_STATE.clear()
    return UNet2DConditionModel().eval()


_ADAPTER_STATE: list[torch.Tensor] = []


def step(model: nn.Module, i: int) -> None:
    # StableDiffusionAdapterPipeline denoising loop: adapter features computed once, copied per step
    g = torch.Generator().manual_seed(0)
    if not _ADAPTER_STATE:
        _ADAPTER_STATE.append(torch.randn(2, 8, 4, 4, generator=g))
    latents = torch.randn(2, 4, 8, 8, generator=g)
    t = torch.tensor(999 - 125 * i)
    with torch.no_grad():
        model(latents, t, torch.randn(2, 7, 8, generator=g), down_intrablock_additional_residuals=[s.clone() for s in _ADAPTER_STATE])
