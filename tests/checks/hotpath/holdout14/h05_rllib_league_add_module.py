"""Hazard: an RLlib-style MultiRLModule whose compiled forward loops over its dict of per-policy modules; league-based self-play adds a frozen snapshot policy mid-training (`add_module`), which changes the module dict the compiled frame iterated over and recompiles the whole update (RLlib resets and recompiles on every add/remove). From ray-project/ray#35759 (compile update logic on learner: "we need to reset and recompile the whole thing every time we add/remove a module")."""
from __future__ import annotations

import copy

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/ray-project/ray/pull/35759"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class PPOTorchRLModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
        self.vf = nn.Linear(8, 1)

    def forward_train(self, obs):
        return {"action_dist_inputs": self.pi(obs), "vf_preds": self.vf(obs).squeeze(-1)}


class MultiRLModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._rl_modules = nn.ModuleDict({"main": PPOTorchRLModule()})

    def add_module(self, module_id: str, module: nn.Module) -> None:  # noqa: D102 (RLlib's API name)
        self._rl_modules[module_id] = module

    def forward(self, batch: dict):
        return {mid: self._rl_modules[mid].forward_train(batch[mid]) for mid in self._rl_modules if mid in batch}


def build() -> nn.Module:
    return MultiRLModule()


def step(model: nn.Module, i: int) -> None:
    """One learner update; a league callback snapshots the main policy at iterations 3 and 6."""
    if i in (3, 6):
        snapshot = copy.deepcopy(model._rl_modules["main"]).requires_grad_(False)
        model.add_module(f"main_v{i}", snapshot)
    batch = {mid: torch.randn(4, 8) for mid in model._rl_modules}
    out = model(batch)
    loss = sum(o["action_dist_inputs"].logsumexp(-1).mean() + o["vf_preds"].pow(2).mean() for o in out.values())
    loss.backward()
