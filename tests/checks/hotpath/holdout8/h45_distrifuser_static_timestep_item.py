"""Hazard: DistriFusion's patch-parallel UNet wrapper, on its CUDA-graph path, copies the scalar diffusion timestep into the captured static input buffer element by element with `timestep.item()` inside a Python loop and picks the graph to replay from a step counter it increments in forward; the `.item()` breaks the graph inside the loop, so Dynamo gives up on the whole wrapper forward. From mit-han-lab/distrifuser#26 (this method does not work with torch.compile: graph break from Tensor.item())."""
from __future__ import annotations

import dataclasses

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/mit-han-lab/distrifuser/issues/26"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


@dataclasses.dataclass
class DistriConfig:
    world_size: int = 1
    use_cuda_graph: bool = True
    warmup_steps: int = 2
    do_classifier_free_guidance: bool = False
    split_batch: bool = False


class TinyUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.time_proj = nn.Linear(1, 8)
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.out = nn.Conv2d(4, 4, 1)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        t = self.time_proj(timestep[:, None].float())[:, :4, None, None]
        h = self.conv(sample) + t + encoder_hidden_states.mean()
        return self.out(torch.nn.functional.silu(h))


class DistriUNetPP(nn.Module):
    """Patch-parallel wrapper; three 'captured graphs': sync warmup, first stale step, steady stale steps."""

    def __init__(self, model: TinyUNet, distri_config: DistriConfig) -> None:
        super().__init__()
        self.model = model
        self.distri_config = distri_config
        self.counter = 0
        self.static_inputs = {
            "sample": torch.zeros(1, 4, 8, 8),
            "timestep": torch.zeros(1, dtype=torch.long),
            "encoder_hidden_states": torch.zeros(1, 4, 8),
        }
        self.graph_scales = [1.0, 0.5, 0.25]  # stands for the replayed graphs' different comm patterns

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        distri_config = self.distri_config
        if distri_config.use_cuda_graph:
            static_inputs = self.static_inputs
            static_inputs["sample"].copy_(sample)
            if torch.is_tensor(timestep) and timestep.ndim == 0:
                for b in range(static_inputs["timestep"].shape[0]):
                    static_inputs["timestep"][b] = timestep.item()
            else:
                static_inputs["timestep"].copy_(timestep)
            static_inputs["encoder_hidden_states"].copy_(encoder_hidden_states)

            if self.counter <= distri_config.warmup_steps:
                graph_idx = 0
            elif self.counter == distri_config.warmup_steps + 1:
                graph_idx = 1
            else:
                graph_idx = 2
            output = self.model(**static_inputs) * self.graph_scales[graph_idx]  # cuda_graphs[graph_idx].replay()
        else:
            output = self.model(sample, timestep, encoder_hidden_states)
        self.counter += 1
        return output


def build() -> nn.Module:
    return DistriUNetPP(TinyUNet(), DistriConfig())


def step(model: nn.Module, i: int) -> None:
    timesteps = torch.linspace(999, 0, 8).long()  # the diffusion scheduler's timesteps, one per denoising step
    with torch.no_grad():
        model(torch.randn(1, 4, 8, 8), timesteps[i], torch.randn(1, 4, 8))
