"""CC310 from what the step hands the compiled code: a record it builds anew every call whose Python field the
compiled forward reads (vLLM's per-step attention metadata), a loop over tensors of several shapes passed one by
one (an optimizer's per-parameter step), and an optimizer-style `param_groups` entry a scheduler rewrites. A record
field the forward never reads, and tensors of one shape, are not reported."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Metadata:
    seq_lens: torch.Tensor
    max_len: int
    num_seqs: int


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, meta: Metadata):
        scratch = torch.zeros(x.shape[0], meta.max_len)
        return self.proj(x) + scratch.sum(-1, keepdim=True) + meta.seq_lens[:, None]


class Scale(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.param_groups = [{"lr": 0.1}]

    def forward(self, p):
        group = self.param_groups[0]
        return p * group["lr"]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()
        self.scale = Scale()
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.Linear(16, 8))


REGION = "*"


def build() -> nn.Module:
    return Model()


def step(model, i):
    meta = Metadata(torch.tensor([3, 2]), max_len=4 + i, num_seqs=2 + i)
    with torch.no_grad():
        model.attn(torch.randn(2, 8), meta)  # expect: CC310 warning
        for p in model.mlp.parameters():
            model.scale(p)  # expect: CC310 warning
    model.scale.param_groups[0]["lr"] = 0.1 * 0.9**i  # expect: CC310 warning
