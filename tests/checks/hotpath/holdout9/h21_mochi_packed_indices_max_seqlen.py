"""Hazard: the Mochi wrapper's sampler builds a `packed_indices` dict per prompt whose `max_seqlen_in_batch_kv` is a Python int (valid text tokens + visual tokens), and the compiled joint DiT reads it, so each new prompt length fails `L['packed_indices']['max_seqlen_in_batch_kv'] == N` and recompiles (cache_size_limit after a few clips). From kijai/ComfyUI-MochiWrapper#44."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/kijai/ComfyUI-MochiWrapper/issues/44"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class AsymmetricJointBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_x = nn.Linear(dim, 3 * dim)
        self.qkv_y = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, y: torch.Tensor, packed_indices: dict) -> torch.Tensor:
        qx, kx, vx = self.qkv_x(x).chunk(3, dim=-1)
        qy, ky, vy = self.qkv_y(y).chunk(3, dim=-1)
        k = torch.cat([kx, ky], dim=0).index_select(0, packed_indices["valid_token_indices_kv"])
        v = torch.cat([vx, vy], dim=0).index_select(0, packed_indices["valid_token_indices_kv"])
        max_seqlen = packed_indices["max_seqlen_in_batch_kv"]
        # stands in for flash_attn_varlen_func(..., max_seqlen_k=max_seqlen)
        k = nn.functional.pad(k, (0, 0, 0, max_seqlen - k.shape[0]))
        v = nn.functional.pad(v, (0, 0, 0, max_seqlen - v.shape[0]))
        return self.proj(torch.softmax(qx @ k.t(), dim=-1) @ v)


class AsymmDiTJoint(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([AsymmetricJointBlock() for _ in range(2)])

    def forward(self, x: torch.Tensor, y: torch.Tensor, packed_indices: dict) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, y, packed_indices)
        return x


def compute_packed_indices(num_visual: int, y_mask: torch.Tensor) -> dict:
    valid_text = int(y_mask.sum())  # prompt length after tokenization
    valid = torch.cat([torch.arange(num_visual), num_visual + torch.nonzero(y_mask).flatten()])
    return {"valid_token_indices_kv": valid, "max_seqlen_in_batch_kv": num_visual + valid_text}


def build() -> nn.Module:
    return AsymmDiTJoint()


def step(model: nn.Module, i: int) -> None:
    prompt_tokens = [5, 3, 7, 2, 6, 4, 8, 1][i]  # a new prompt per queued clip
    y_mask = torch.zeros(8, dtype=torch.bool)
    y_mask[:prompt_tokens] = True
    packed = compute_packed_indices(8, y_mask)
    with torch.no_grad():
        model(torch.randn(8, 8), torch.randn(8, 8), packed)
