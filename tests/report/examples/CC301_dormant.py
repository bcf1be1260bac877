"""CC301 behind Python state that is false now: reported only when something turns that state on. Here the step
switches the model to training mode (a warning: the counter runs compiled from then on); a flag nothing sets stays
silent; a flag the hot path sets itself makes it an error."""
import torch
from torch import nn


class Stats(nn.Module):
    def __init__(self, log_stats: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.log_stats = log_stats
        self.warm = False
        self.seen_tokens = 0
        self.calls = 0
        self.warm_calls = 0

    def forward(self, x):
        if self.training:
            self.seen_tokens += x.shape[0]  # expect: CC301 warning
        if not self.log_stats:
            return self.proj(x)
        self.calls += 1  # nothing turns log_stats on: never runs compiled, not reported
        return self.proj(x)


class WarmedUp(Stats):
    def forward(self, x):
        if self.warm:
            self.warm_calls += 1  # expect: CC301 (the flag is set on the hot path: an error)
        self.warm = True  # expect: CC302
        return super().forward(x)


def build() -> nn.Module:
    return WarmedUp().eval()


def step(model, i):
    model.train()
    return model(torch.randn(2, 8))
