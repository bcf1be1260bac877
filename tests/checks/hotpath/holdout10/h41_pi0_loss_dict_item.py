"""Hazard: the PI0 policy's compiled `forward` fills its `loss_dict` with `loss.item()` floats for logging, so every training step breaks the graph at the host sync inside the compiled policy. From huggingface/lerobot#729 (Optimize pi0 for torch.compile: loss.item() graph break)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/lerobot/pull/729"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


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

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        loss_dict = {}
        losses = self.model(batch["observation.state"], batch["action"], batch["noise"], batch["time"])
        loss_dict["losses_after_forward"] = losses.clone()
        actions_is_pad = batch.get("action_is_pad")
        if actions_is_pad is not None:
            losses = losses * (~actions_is_pad).unsqueeze(-1)
            loss_dict["losses_after_in_ep_bound"] = losses.clone()
        loss = losses.mean()
        loss_dict["l2_loss"] = loss.item()
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
    loss.backward()
    model.zero_grad(set_to_none=True)
