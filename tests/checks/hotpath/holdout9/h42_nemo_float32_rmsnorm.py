"""Hazard: a NeMo Automodel `Float32RMSNorm` compiled as its own region is reached with hidden states of different rank (3-D in the decoder, 2-D for the packed MoE router / q-k norms) and under both grad and no-grad (eval-in-the-loop), so the guards on ndim and grad mode fail and the norm recompiles for each combination. From NVIDIA-NeMo/Automodel#1650 (Float32RMSNorm torch.compile crash: FailOnRecompileLimitHit from varying ndim/autocast/grad_mode)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA-NeMo/Automodel/pull/1650"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "**.norm"


class Float32RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight * x).to(dtype)


class MoEBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = Float32RMSNorm(dim)
        self.router = nn.Linear(dim, 4)
        self.expert = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        h = self.norm(hidden)  # [batch, seq, dim]
        bsz, seq, dim = h.shape
        flat = h.view(-1, dim)  # packed tokens for the router
        scores = torch.softmax(self.router(flat), dim=-1)
        out = self.expert(flat) * scores[:, :1]
        return hidden + out.view(bsz, seq, dim)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 8)  # stands for the token embedding
        self.block = MoEBlock()
        self.head = nn.Sequential(nn.Linear(8, 8))
        self.head.norm = Float32RMSNorm(8)  # final norm applied on packed tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.block(self.embed(x))
        return self.head.norm(h.view(-1, 8)).sum()


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(2, 4, 4)
    if i % 4 == 3:  # periodic validation inside the training loop
        with torch.no_grad():
            model(x)
    else:
        model(x).backward()
