"""Hazard: a pi05-style policy is compiled at the wrapper level, whose forward normalizes the batch, trims the padded language tokens with `.cpu().tolist()` lengths and builds the state discretisation with numpy before calling the flow-matching model, so Dynamo breaks out of the compiled wrapper on every training step. From TensorAuto/OpenTau#428 (compile the inner flow-matching module, not the policy wrapper whose `.cpu().tolist()` / numpy / string work would only graph-break)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/TensorAuto/OpenTau/pull/428"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class FlowMatching(nn.Module):
    """The heavy backbone-prefix + action-expert transformer (reduced)."""

    def __init__(self, dim: int = 8, horizon: int = 4) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(32, dim)
        self.state_proj = nn.Linear(dim, dim)
        self.action_in = nn.Linear(2, dim)
        self.action_out = nn.Linear(dim, 2)
        self.horizon = horizon

    def forward(self, tokens: torch.Tensor, state: torch.Tensor, noisy_actions: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        prefix = self.embed_tokens(tokens).mean(1, keepdim=True) + self.state_proj(state).unsqueeze(1)
        suffix = self.action_in(noisy_actions) + time.view(-1, 1, 1)
        return self.action_out(suffix + prefix)


class PI05Policy(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.model = FlowMatching(dim)
        self.register_buffer("state_mean", torch.zeros(dim))
        self.register_buffer("state_std", torch.ones(dim))
        self.max_token_len = 6

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        state = (batch["observation.state"] - self.state_mean) / self.state_std
        # discretise the normalised state into 16 bins (numpy on host) and trim padded tokens to the batch max length
        bins = np.digitize(state.detach().cpu().numpy(), np.linspace(-1, 1, 17)[:-1]) - 1
        lengths = batch["attention_mask"].sum(-1).cpu().tolist()
        tokens = batch["tokens"][:, : max(max(lengths), 1)]
        state = state + torch.from_numpy(bins).to(state.dtype) * 0.0
        actions = batch["action"]
        time = torch.rand(actions.shape[0])
        noise = torch.randn_like(actions)
        x_t = time.view(-1, 1, 1) * noise + (1 - time.view(-1, 1, 1)) * actions
        v_t = self.model(tokens, state, x_t, time)
        return ((v_t - (noise - actions)) ** 2).mean()


def build() -> nn.Module:
    return PI05Policy()


def step(model: nn.Module, i: int) -> None:
    mask = torch.zeros(2, 6, dtype=torch.long)
    mask[:, :4] = 1  # the same padded prompt length every batch
    batch = {
        "observation.state": torch.randn(2, 8),
        "tokens": torch.randint(0, 32, (2, 6)),
        "attention_mask": mask,
        "action": torch.randn(2, 4, 2),
    }
    loss = model(batch)
    loss.backward()
