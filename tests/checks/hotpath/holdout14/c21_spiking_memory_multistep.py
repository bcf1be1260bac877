"""Clean: the same spikingjelly-style LIF neuron with a float reset value, but run in multi-step mode: the whole [T, B, C] sequence goes through one compiled call and `reset_net` runs after it, so every call enters with `v` the float 0.0 and the frame compiles once. Look-alike of h41 (fangwei123456/spikingjelly#661)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import MemoryModule, reset_net

LABEL = None
SOURCE = "https://github.com/fangwei123456/spikingjelly/pull/661"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

T = 3  # timesteps per sample


class LIFNode(MemoryModule):
    def __init__(self, tau: float = 2.0, v_threshold: float = 1.0, v_reset: float = 0.0) -> None:
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.step_mode = "m"
        self.register_memory("v", v_reset)

    def v_float_to_tensor(self, x: torch.Tensor) -> None:
        if isinstance(self.v, float):
            v_init = self.v
            self.v = torch.full_like(x.data, v_init)

    def single_step_forward(self, x: torch.Tensor) -> torch.Tensor:
        self.v_float_to_tensor(x)
        self.v = self.v + (x - (self.v - self.v_reset)) / self.tau
        spike = (self.v >= self.v_threshold).to(self.v.dtype)
        self.v = spike * self.v_reset + (1.0 - spike) * self.v
        return spike

    def multi_step_forward(self, x_seq: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.single_step_forward(x_seq[t]) for t in range(x_seq.shape[0])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.step_mode == "m":
            return self.multi_step_forward(x)
        return self.single_step_forward(x)


class SNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.lif = LIFNode()
        self.head = nn.Linear(8, 4)

    def forward(self, x_seq: torch.Tensor) -> torch.Tensor:
        return self.head(self.lif(self.fc(x_seq))).mean(0)


def build() -> nn.Module:
    return SNN()


def step(model: nn.Module, i: int) -> None:
    x_seq = torch.randn(4, 8).unsqueeze(0).repeat(T, 1, 1)  # [T, B, C]
    model(x_seq).sum().backward()
    reset_net(model)
