"""Hazard: a NeMo-Automodel DFlash-style speculative drafter builds its block attention mask inside the compiled forward from the batch's anchor positions, and the anchor count is `min(num_anchors, valid anchors in this batch)`, so a batch with a new anchor count changes the mask shape and re-specialises the compiled drafter. From NVIDIA-NeMo/Automodel#2532 (compile variable-shape flex callables with dynamic shapes: every new anchor count forced a re-specialization)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA-NeMo/Automodel/pull/2532"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}

NUM_ANCHORS = 4
BLOCK_SIZE = 2
SEQ = 12


class DFlashDrafter(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.kv_proj = nn.Linear(dim, 2 * dim)
        self.o_proj = nn.Linear(dim, dim)

    @staticmethod
    def build_block_mask(anchors: torch.Tensor, seq_len: int) -> torch.Tensor:
        # each anchor's draft block attends to the context up to the anchor (create_block_mask's mask_mod, dense here)
        q_anchor = anchors.repeat_interleave(BLOCK_SIZE)  # (n_anchor * BLOCK_SIZE,)
        kv_idx = torch.arange(seq_len)
        return kv_idx[None, :] <= q_anchor[:, None]

    def forward(self, hidden: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        draft_in = hidden[anchors].repeat_interleave(BLOCK_SIZE, dim=0)  # (n_anchor * BLOCK_SIZE, dim)
        q = self.q_proj(draft_in)
        k, v = self.kv_proj(hidden).chunk(2, dim=-1)
        mask = self.build_block_mask(anchors, hidden.shape[0])
        scores = (q @ k.t()).masked_fill(~mask, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ v)


def select_anchors(loss_mask: torch.Tensor) -> torch.Tensor:
    valid = torch.nonzero(loss_mask[:-BLOCK_SIZE]).flatten()
    n = min(NUM_ANCHORS, int(valid.numel()))
    return valid[torch.linspace(0, valid.numel() - 1, n).long()]


def build() -> nn.Module:
    return DFlashDrafter()


def step(model: nn.Module, i: int) -> None:
    # assistant-token masks of the packed samples: some batches have fewer valid anchor positions than NUM_ANCHORS
    valid_tokens = [8, 3, 8, 2, 5, 1, 8, 3][i]
    loss_mask = torch.zeros(SEQ, dtype=torch.bool)
    loss_mask[SEQ - BLOCK_SIZE - valid_tokens : SEQ - BLOCK_SIZE] = True
    anchors = select_anchors(loss_mask)
    out = model(torch.randn(SEQ, 8), anchors)
    out.pow(2).mean().backward()
    model.zero_grad(set_to_none=True)
