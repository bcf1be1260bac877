"""Hazard: a modded-nanogpt-style speedrun passes the attention window size (in blocks) from a step-based schedule
`get_ws(step)` into the compiled model; the window feeds a block mask built with Python ints (long and short
windows, `ws // 2`), so the first schedule change fails the guard `ws == 2` and recompiles (torch 2.13 then makes
`ws` dynamic; the report pre-warms one compile per window x batch-size combination). From
KellerJordan/modded-nanogpt#171 (decoupled window size schedule: "increased the total number of unique kernel
configurations we need to warm up")."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/KellerJordan/modded-nanogpt/pull/171"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

BLOCK_SIZE = 2  # tokens per attention block
SEQ_LEN = 16


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int = 2) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.c_proj = nn.Linear(dim, dim, bias=False)
        self.heads = heads

    def forward(self, x: torch.Tensor, block_mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=block_mask)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.attn = CausalSelfAttention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim, bias=False), nn.ReLU(), nn.Linear(4 * dim, dim, bias=False))

    def forward(self, x: torch.Tensor, block_mask: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(F.rms_norm(x, (x.size(-1),)), block_mask)
        return x + self.mlp(F.rms_norm(x, (x.size(-1),)))


class GPT(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, num_layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(num_layers))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def create_blockmasks(self, seq_len: int, sliding_window_num_blocks: int) -> tuple[torch.Tensor, torch.Tensor]:
        block_idx = torch.arange(seq_len) // BLOCK_SIZE
        causal = block_idx[:, None] >= block_idx[None, :]
        distance = block_idx[:, None] - block_idx[None, :]
        long_bm = causal & (distance < sliding_window_num_blocks)
        short_bm = causal & (distance < sliding_window_num_blocks // 2)
        return long_bm, short_bm

    def forward(self, input_seq: torch.Tensor, target_seq: torch.Tensor, ws: int) -> torch.Tensor:
        long_bm, short_bm = self.create_blockmasks(input_seq.size(-1), ws)
        block_masks = [long_bm, short_bm]  # long / short window layers alternate
        x = self.embed(input_seq)
        for block, bm in zip(self.blocks, block_masks, strict=True):
            x = block(x, bm)
        logits = self.lm_head(F.rms_norm(x, (x.size(-1),)))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), target_seq.view(-1))


TRAIN_STEPS = 8
WS_SCHEDULE = ((0.55, 2), (0.8, 5), (1.0, 7))  # (fraction of training, window size in blocks)


def get_ws(step: int) -> int:
    x = step / TRAIN_STEPS
    for frac, ws in WS_SCHEDULE:
        if x < frac:
            return ws
    return WS_SCHEDULE[-1][1]


def build() -> nn.Module:
    return GPT()


def step(model: nn.Module, i: int) -> None:
    seq = torch.randint(0, 32, (1, SEQ_LEN + 1))
    model(seq[:, :-1], seq[:, 1:], get_ws(i)).backward()
