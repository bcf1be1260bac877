"""Clean: the xDiT Minimax-H3 wrapper after the fix keeps all varlen keys of `_usp_attention_kwargs` present on every request; when no padding is needed it fills them with the no-padding values (full-length cu_seqlens and an all-true mask) instead of popping them, so the key set and the value types never change and the compiled block is traced once. Look-alike of xdit-project/xDiT#781."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/xdit-project/xDiT/pull/781"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def usp_attention(q, k, v, cu_seqlens=None, pad_mask=None, valid_len=None):
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if pad_mask is not None:
        scores = scores.masked_fill(~pad_mask, float("-inf"))
    return F.softmax(scores, dim=-1) @ v


class MinimaxH3Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.to_out = nn.Linear(dim, dim)
        self._usp_attention_kwargs: dict[str, torch.Tensor] = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        return self.to_out(usp_attention(q, k, v, **self._usp_attention_kwargs))


class MinimaxH3Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = MinimaxH3Attention(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm(x))
        return x + self.ff(x)


class xFuserMinimaxH3Wrapper(nn.Module):
    """The parallel wrapper: pads the packed sequence to the sequence-parallel degree and tells attention about it."""

    def __init__(self, dim: int = 8, padded_len: int = 8) -> None:
        super().__init__()
        self.padded_len = padded_len
        self.block = MinimaxH3Block(dim)

    def prepare(self, num_tokens: int) -> None:
        kwargs = self.block.attn._usp_attention_kwargs
        mask = torch.arange(self.padded_len) < num_tokens  # all true when no padding is needed
        kwargs.update(
            cu_seqlens=torch.tensor([0, num_tokens, self.padded_len], dtype=torch.int32),
            pad_mask=mask.unsqueeze(0).expand(self.padded_len, -1),
            valid_len=torch.tensor(num_tokens),
        )


REGION = "block"


def build() -> nn.Module:
    return xFuserMinimaxH3Wrapper()


def step(model: nn.Module, i: int) -> None:
    num_tokens = [8, 8, 6, 8, 7, 8, 8, 5][i]  # tokens in the packed sequence this request
    model.prepare(num_tokens)
    with torch.no_grad():
        model.block(torch.randn(model.padded_len, 8))
