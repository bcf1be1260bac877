"""Clean: an RLlib-style rollout worker compiles its RLModule's exploration forward once, and after every learner update the new weights are synced into it with `load_state_dict` (an in-place copy into the existing parameters), never by swapping modules or resetting Dynamo. The report found the synced weights had no effect on the compiled rollout module (workaround: `torch._dynamo.reset()` and retracing after every update); on torch 2.13 the in-place copy is seen by the compiled forward, and it compiles once. From ray-project/ray#34640 ([RLlib] Add torch compile capabilities to TorchRLModule: after `load_state_dict` the rollout workers kept sampling with the initial policy)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/ray-project/ray/pull/34640"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PPOTorchRLModule(nn.Module):
    def __init__(self, obs_dim: int = 8, n_actions: int = 4) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh())
        self.pi = nn.Linear(16, n_actions)
        self.vf = nn.Linear(16, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.encoder(obs)
        return self.pi(h), self.vf(h).squeeze(-1)


class Learner:
    """Holds the uncompiled training copy and produces a new state dict after each update."""

    def __init__(self) -> None:
        self.module = PPOTorchRLModule()
        self.optim = torch.optim.SGD(self.module.parameters(), lr=0.1)

    def update(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        logits, values = self.module(obs)
        loss = -logits.log_softmax(-1)[:, 0].mean() + values.pow(2).mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return {k: v.detach().clone() for k, v in self.module.state_dict().items()}


_learner = Learner()


def build() -> nn.Module:
    global _learner
    _learner = Learner()
    worker_module = PPOTorchRLModule()
    worker_module.load_state_dict(_learner.module.state_dict())
    return worker_module


_obs = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        logits, _ = model(_obs)  # rollout (exploration forward on the worker)
    weights = _learner.update(_obs)
    model.load_state_dict(weights)  # weight sync: in-place copy into the worker's parameters
    with torch.no_grad():
        synced, _ = model(_obs)
        expected, _ = _learner.module(_obs)
    assert torch.allclose(synced, expected), "compiled rollout module must see the synced weights"
