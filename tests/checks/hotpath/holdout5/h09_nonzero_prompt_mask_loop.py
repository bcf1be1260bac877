"""Hazard: the attention processor loops over the batch and gathers the valid prompt tokens with torch.nonzero on the attention mask, a data-dependent output shape inside a Python for loop, so Dynamo gives up on the whole frame. From tenstorrent/tt-xla#5951 (torch.nonzero in MochiAttnProcessor2_0 disables torch.compile)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/tenstorrent/tt-xla/issues/5951"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}


class JointAttnProcessor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_qkv = nn.Linear(8, 24)
        self.add_qkv = nn.Linear(8, 24)
        self.to_out = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        batch_size = hidden_states.shape[0]
        q, k, v = self.to_qkv(hidden_states).chunk(3, dim=-1)
        eq, ek, ev = self.add_qkv(encoder_hidden_states).chunk(3, dim=-1)
        outputs = []
        for idx in range(batch_size):
            mask = attention_mask[idx][None, :]
            valid_prompt_token_indices = torch.nonzero(mask.flatten(), as_tuple=False).flatten()
            valid_eq = eq[idx : idx + 1, valid_prompt_token_indices]
            valid_ek = ek[idx : idx + 1, valid_prompt_token_indices]
            valid_ev = ev[idx : idx + 1, valid_prompt_token_indices]
            joint_q = torch.cat([q[idx : idx + 1], valid_eq], dim=1)
            joint_k = torch.cat([k[idx : idx + 1], valid_ek], dim=1)
            joint_v = torch.cat([v[idx : idx + 1], valid_ev], dim=1)
            out = F.scaled_dot_product_attention(joint_q, joint_k, joint_v)
            outputs.append(out[:, : hidden_states.shape[1]])
        return self.to_out(torch.cat(outputs, dim=0))


def build() -> nn.Module:
    return JointAttnProcessor()


def step(model: nn.Module, i: int) -> None:
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[:, 4 + i % 2 :] = 0  # padded prompts
    with torch.no_grad():
        model(torch.randn(2, 5, 8), torch.randn(2, 6, 8), mask)
