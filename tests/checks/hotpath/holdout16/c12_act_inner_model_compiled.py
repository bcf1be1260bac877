"""Clean: the same ACT policy, but only the inner `ACT` model is compiled (`policy.model = torch.compile(policy.model)` when `compile_model=True`); the `.item()` calls that fill the logging dict stay in the uncompiled `ACTPolicy.forward`, so the compiled region is pure tensor code with one graph. The fix described in huggingface/lerobot#3061."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout16.h24_act_policy_loss_item import ACT

LABEL = None
SOURCE = "https://github.com/huggingface/lerobot/pull/3061"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "model"


class ACTPolicy(nn.Module):
    def __init__(self, kl_weight: float = 10.0) -> None:
        super().__init__()
        self.kl_weight = kl_weight
        self.model = ACT()  # compile_model=True compiles this module only

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        actions_hat, (mu, log_sigma_x2) = self.model(batch["observation.state"], batch["action"])
        l1_loss = F.l1_loss(batch["action"], actions_hat)
        mean_kld = (-0.5 * (1 + log_sigma_x2 - mu.pow(2) - log_sigma_x2.exp())).sum(-1).mean()
        loss_dict = {"l1_loss": l1_loss.item(), "kld_loss": mean_kld.item()}
        return l1_loss + mean_kld * self.kl_weight, loss_dict


def build() -> nn.Module:
    return ACTPolicy()


def step(model: nn.Module, i: int) -> None:
    batch = {"observation.state": torch.randn(2, 8), "action": torch.randn(2, 3, 4)}
    loss, loss_dict = model(batch)
    loss.backward()
    _ = dict(loss_dict)
