"""Clean: the same pi0-style flow-matching sampler after the fix, integrating the action ODE with a Python `for step in
range(self.num_steps)` and `time = 1.0 + step * dt` computed from constants, so the loop unrolls at trace time and
the sampler compiles once. The fix in huggingface/lerobot#2600 (fix torch.compile in diffusion sampling loops at
inference time)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/lerobot/pull/2600"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ActionExpert(nn.Module):
    def __init__(self, action_dim: int = 4, width: int = 8) -> None:
        super().__init__()
        self.action_in_proj = nn.Linear(action_dim, width)
        self.action_time_mlp_in = nn.Linear(2 * width, width)
        self.action_time_mlp_out = nn.Linear(width, width)
        self.action_out_proj = nn.Linear(width, action_dim)
        self.width = width

    def time_embedding(self, timestep: torch.Tensor) -> torch.Tensor:
        freqs = torch.exp(-torch.arange(self.width // 2, dtype=torch.float32) / (self.width // 2))
        angles = timestep[:, None] * freqs[None] * 1000.0
        return torch.cat([angles.sin(), angles.cos()], dim=-1)

    def forward(self, prefix: torch.Tensor, x_t: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        a = self.action_in_proj(x_t)
        t = self.time_embedding(timestep)[:, None].expand_as(a)
        h = self.action_time_mlp_out(torch.nn.functional.silu(self.action_time_mlp_in(torch.cat([a, t], dim=-1))))
        return self.action_out_proj(h + prefix[:, None])


class PI0FlowMatching(nn.Module):
    def __init__(self, state_dim: int = 6, width: int = 8, num_steps: int = 5, chunk: int = 3) -> None:
        super().__init__()
        self.state_proj = nn.Linear(state_dim, width)
        self.expert = ActionExpert(width=width)
        self.num_steps = num_steps
        self.chunk = chunk

    def denoise_step(self, prefix: torch.Tensor, x_t: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.expert(prefix, x_t, timestep)

    def forward(self, state: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:  # sample_actions
        bsize = state.shape[0]
        prefix = self.state_proj(state)
        dt = -1.0 / self.num_steps
        x_t = noise
        for step in range(self.num_steps):
            time = 1.0 + step * dt
            time_tensor = torch.full((bsize,), time, dtype=torch.float32, device=state.device)
            v_t = self.denoise_step(prefix, x_t, time_tensor)
            x_t = x_t + dt * v_t
        return x_t


def build() -> nn.Module:
    return PI0FlowMatching().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():  # select_action on one observation
        model(torch.randn(2, 6), torch.randn(2, 3, 4))
