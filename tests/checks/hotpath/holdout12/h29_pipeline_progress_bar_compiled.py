"""Hazard: a whole diffusion pipeline (denoising loop included) is compiled, e.g. to export it, and the loop runs inside `with self.progress_bar(total=num_inference_steps) as progress_bar:`; Dynamo refuses to trace `tqdm.__new__` and cannot enter the tqdm context manager, so the pipeline frame breaks around the loop on every call. From huggingface/diffusers#10098 (avoid compiling a progress bar)."""
from __future__ import annotations

import io

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_b import ProgressBarMixin

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/diffusers/pull/10098"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 3}
REQUIRES = ("tqdm",)
SERVER_LOG = io.StringIO()  # the serving app routes tqdm output into its own log stream


class UNetTiny(nn.Module):
    def __init__(self, ch: int = 4) -> None:
        super().__init__()
        self.time_proj = nn.Linear(1, ch)
        self.conv_in = nn.Conv2d(ch, ch, 3, padding=1)
        self.conv_out = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        emb = self.time_proj(timestep.float().reshape(-1, 1) / 1000)[:, :, None, None]
        return self.conv_out(torch.nn.functional.silu(self.conv_in(sample) + emb))


class DDIMPipeline(nn.Module, ProgressBarMixin):
    """The pipeline as one module so the whole call can be compiled (export-style)."""

    def __init__(self, num_inference_steps: int = 4) -> None:
        super().__init__()
        self.unet = UNetTiny()
        self.num_inference_steps = num_inference_steps
        alphas = torch.linspace(0.9999, 0.98, 1000).cumprod(0)
        self.register_buffer("alphas_cumprod", alphas)
        self.register_buffer("timesteps", torch.linspace(999, 0, num_inference_steps).long())
        self.register_buffer("alpha_prod_t", alphas[self.timesteps])  # scheduler.set_timesteps() precomputes these
        self.set_progress_bar_config(leave=False, disable=False, file=SERVER_LOG)

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        with self.progress_bar(total=self.num_inference_steps) as progress_bar:
            for t, a_t in zip(self.timesteps, self.alpha_prod_t):
                noise_pred = self.unet(latents, t)
                x0 = (latents - (1 - a_t).sqrt() * noise_pred) / a_t.sqrt()
                latents = x0 * a_t.sqrt() + (1 - a_t).sqrt() * noise_pred * 0.5
                progress_bar.update()
        return latents


def build() -> nn.Module:
    return DDIMPipeline().eval()


def step(model: nn.Module, i: int) -> None:
    """One image request."""
    with torch.no_grad():
        model(torch.randn(1, 4, 8, 8))
