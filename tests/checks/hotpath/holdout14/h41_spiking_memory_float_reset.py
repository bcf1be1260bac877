"""Hazard: a spikingjelly-style LIF neuron keeps its membrane potential `v` in a `_memories` registry whose reset value is the Python float 0.0; in single-step mode the first timestep of every batch enters the compiled net with `v` a float and later timesteps with `v` a tensor, so Dynamo specialises on the float->Tensor transition and compiles the frame twice. From fangwei123456/spikingjelly#661 (keep tensor states as tensors across resets so Dynamo does not re-specialize)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import MemoryModule, reset_net

LABEL = "library-object"
SOURCE = "https://github.com/fangwei123456/spikingjelly/pull/661"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

T = 3  # timesteps per sample


class LIFNode(MemoryModule):
    def __init__(self, tau: float = 2.0, v_threshold: float = 1.0, v_reset: float = 0.0) -> None:
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.register_memory("v", v_reset)

    def v_float_to_tensor(self, x: torch.Tensor) -> None:
        if isinstance(self.v, float):
            v_init = self.v
            self.v = torch.full_like(x.data, v_init)

    def neuronal_charge(self, x: torch.Tensor) -> None:
        self.v = self.v + (x - (self.v - self.v_reset)) / self.tau

    def neuronal_fire(self) -> torch.Tensor:
        return (self.v >= self.v_threshold).to(self.v.dtype)

    def neuronal_reset(self, spike: torch.Tensor) -> None:
        self.v = spike * self.v_reset + (1.0 - spike) * self.v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.v_float_to_tensor(x)
        self.neuronal_charge(x)
        spike = self.neuronal_fire()
        self.neuronal_reset(spike)
        return spike


class SNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.lif = LIFNode()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.lif(self.fc(x)))


def build() -> nn.Module:
    return SNN()


def step(model: nn.Module, i: int) -> None:
    img = torch.randn(4, 8)
    out_fr = 0.0
    for _t in range(T):  # single-step mode: the net is called once per timestep
        out_fr = out_fr + model(img)
    (out_fr / T).sum().backward()
    reset_net(model)  # functional.reset_net(net) after every batch
