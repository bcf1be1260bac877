"""CC301 through a local alias: `sched = self.scheduler` names the same object, so `sched.step_index += 1` is the
scheduler's Python counter rewritten on every call (diffusers' `_step_index`). An alias that is only read is not
reported."""
import torch
from torch import nn


class Scheduler:
    def __init__(self) -> None:
        self.step_index = 0
        self.sigmas = torch.linspace(1.0, 0.0, 50)


class Denoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.scheduler = Scheduler()

    def forward(self, x):
        sched = self.scheduler
        sigmas = sched.sigmas
        sched.step_index += 1  # expect: CC301
        return self.net(x) * sigmas[0]


def build() -> nn.Module:
    return Denoiser()
