"""Clean: the same PI0 policy keeps the logged loss in `loss_dict` as a detached tensor (`loss.detach()`) and the training script calls `.item()` after the compiled forward returns, the fix of huggingface/lerobot#729, so the policy compiles once with no break."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/lerobot/pull/729"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PI0FlowMatching(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.action_in_proj = nn.Linear(dim, dim)
        self.action_out_proj = nn.Linear(dim, dim)

    def forward(self, state: torch.Tensor, actions: torch.Tensor, noise: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        x_t = time[:, None] * noise + (1 - time[:, None]) * actions
        u_t = noise - actions
        v_t = self.action_out_proj(torch.tanh(self.action_in_proj(x_t + state)))
        return nn.functional.mse_loss(u_t, v_t, reduction="none")


class PI0Policy(nn.Module):
    name = "pi0"

    def __init__(self) -> None:
        super().__init__()
        self.model = PI0FlowMatching()

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        loss_dict = {}
        losses = self.model(batch["observation.state"], batch["action"], batch["noise"], batch["time"])
        loss_dict["losses_after_forward"] = losses.clone()
        actions_is_pad = batch.get("action_is_pad")
        if actions_is_pad is not None:
            losses = losses * (~actions_is_pad).unsqueeze(-1)
            loss_dict["losses_after_in_ep_bound"] = losses.clone()
        loss = losses.mean()
        loss_dict["l2_loss"] = loss.detach()
        return loss, loss_dict


def build() -> nn.Module:
    return PI0Policy()


def step(model: nn.Module, i: int) -> None:
    batch = {
        "observation.state": torch.randn(4, 8),
        "action": torch.randn(4, 8),
        "noise": torch.randn(4, 8),
        "time": torch.rand(4),
        "action_is_pad": torch.zeros(4, dtype=torch.bool),
    }
    loss, loss_dict = model(batch)
    logged = {k: v.item() for k, v in loss_dict.items() if v.numel() == 1}  # outside the compiled forward
    assert "l2_loss" in logged
    loss.backward()
    model.zero_grad(set_to_none=True)
