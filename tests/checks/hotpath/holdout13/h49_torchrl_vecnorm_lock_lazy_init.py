"""Hazard: a TorchRL `TransformedEnv` step is compiled with a `VecNormV2` observation transform that takes a multiprocessing lock around its running-statistics update (`with self.lock:`) and lazily creates its statistics on the first call (`if not self.initialized: self._init_stats(...)`); the lock acquire is untraceable and the lazy-init flag flips after the first step, so the compiled step graph-breaks every call and is retraced once. From pytorch/rl#3790 (compile env step-and-reset; make VecNormV2 avoid compile-time graph breaks from lock and initialization checks)."""
from __future__ import annotations

import multiprocessing as mp

import torch
from torch import nn

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/rl/pull/3790"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 4}


class VecNormV2(nn.Module):
    """torchrl.envs.transforms.VecNormV2 (stateful mode): running mean/var of the observation, shared across workers."""

    def __init__(self, in_key: str = "observation", decay: float = 0.99, eps: float = 1e-4) -> None:
        super().__init__()
        self.in_key = in_key
        self.decay = decay
        self.eps = eps
        self.lock = mp.Lock()  # stats may be shared with other collector workers
        self.initialized = False

    def _init_stats(self, obs: torch.Tensor) -> None:
        self.register_buffer("_loc", torch.zeros_like(obs[0]))
        self.register_buffer("_var", torch.ones_like(obs[0]))
        self.register_buffer("_count", torch.zeros(()))
        self.initialized = True

    def _update_and_normalize(self, obs: torch.Tensor) -> torch.Tensor:
        with self.lock:
            self._count.add_(1)
            weight = 1 - self.decay
            self._loc.lerp_(obs.mean(0), weight)
            self._var.lerp_((obs - self._loc).pow(2).mean(0), weight)
            return (obs - self._loc) / (self._var + self.eps).sqrt()

    def forward(self, tensordict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        obs = tensordict[self.in_key]
        if not self.initialized:
            self._init_stats(obs)
        tensordict[self.in_key] = self._update_and_normalize(obs)
        return tensordict


class PendulumDynamics(nn.Module):
    def __init__(self, obs_dim: int = 8) -> None:
        super().__init__()
        self.dynamics = nn.Linear(2 * obs_dim, obs_dim)

    def forward(self, tensordict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        nxt = self.dynamics(torch.cat([tensordict["observation"], tensordict["action"]], -1)).tanh()
        return {"observation": nxt, "reward": -nxt.pow(2).sum(-1, keepdim=True)}


class TransformedEnv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.base_env = PendulumDynamics()
        self.transform = VecNormV2()

    def forward(self, tensordict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:  # env.step_and_maybe_reset
        return self.transform(self.base_env(tensordict))


def build() -> nn.Module:
    return TransformedEnv()


def step(model: nn.Module, i: int) -> None:
    tensordict = {"observation": torch.randn(4, 8), "action": torch.randn(4, 8)}
    with torch.no_grad():
        model(tensordict)
