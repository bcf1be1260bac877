"""Hazard: a torchrl-style ProbabilisticActor caches one `TanhNormal` on the module: the first compiled forward builds it lazily (`self._dist` goes from None to a distribution object inside the region) and every later forward calls `dist.update(loc, scale)`, which rewrites `loc`/`scale` on the cached distribution and its inner `Normal`; the lazily assigned library object fails the guard and the policy recompiles. From pytorch/rl#2312 (LossModule/TensorDictSequential/ProbabilisticActor cannot be compiled with torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import TanhNormal

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/rl/issues/2312"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class NormalParamExtractor(nn.Module):
    def forward(self, x: torch.Tensor):
        loc, scale = x.chunk(2, dim=-1)
        return loc, nn.functional.softplus(scale) + 1e-4


class ProbabilisticActor(nn.Module):
    def __init__(self, obs_dim: int = 8, action_dim: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, 2 * action_dim))
        self.extractor = NormalParamExtractor()
        self._dist: TanhNormal | None = None

    def get_dist(self, loc: torch.Tensor, scale: torch.Tensor) -> TanhNormal:
        if self._dist is None:
            self._dist = TanhNormal(loc, scale)
        else:
            self._dist.update(loc, scale)
        return self._dist

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        loc, scale = self.extractor(self.net(observation))
        dist = self.get_dist(loc, scale)
        return dist.mode


def build() -> nn.Module:
    return ProbabilisticActor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(5, 8))
