"""Library-style helpers shared by author A's cases (h01-h10, c01-c06).

They stand for code that lives outside the model file in the reported projects: torchao's low-bit optimizer step,
a torch.optim-style LR scheduler, fairseq's numpy span-mask sampler and its torch replacement, and an
optimum/BetterTransformer-style encoder layer.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

# --- torchao low-bit optim (torchao/optim/adam.py, `single_param_adam`) -------------------------------------------


def single_param_adam(
    p: torch.Tensor,
    grad: torch.Tensor,
    step: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    lr,
    beta1: float,
    beta2: float,
    weight_decay: float,
    eps: float,
) -> None:
    """One AdamW update for one parameter; `lr` is a Python float or a 0-d tensor, as the caller passes it."""
    step.add_(1)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    p.mul_(1 - lr * weight_decay)
    new_exp_avg = exp_avg.lerp(grad, 1 - beta1)
    new_exp_avg_sq = exp_avg_sq.lerp(grad.square(), 1 - beta2)
    exp_avg.copy_(new_exp_avg)
    exp_avg_sq.copy_(new_exp_avg_sq)
    denom = (new_exp_avg_sq.sqrt() / bias_correction2.sqrt()) + eps
    p.sub_(lr * (new_exp_avg / bias_correction1) / denom)


def cosine_lr(step: int, base_lr: float = 1e-2, total: int = 8, warmup: int = 2) -> float:
    """The value a cosine schedule with linear warm-up hands the optimizer at `step` (a Python float)."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1 + math.cos(math.pi * progress))


class WarmupCosineScheduler:
    """torch.optim.lr_scheduler-style object: step() rewrites `lr` in every param group with a Python float."""

    def __init__(self, param_groups: list[dict], base_lr: float = 1e-2, total: int = 8) -> None:
        self.param_groups = param_groups
        self.base_lr = base_lr
        self.total = total
        self.last_step = 0
        for group in self.param_groups:
            group["lr"] = cosine_lr(0, base_lr, total)

    def step(self) -> None:
        self.last_step += 1
        for group in self.param_groups:
            group["lr"] = cosine_lr(self.last_step, self.base_lr, self.total)


# --- fairseq's data_utils.compute_mask_indices (numpy) and a torch-only replacement ------------------------------


def compute_mask_indices_numpy(shape: tuple[int, int], mask_prob: float, mask_length: int) -> np.ndarray:
    """fairseq-style span masking: numpy RNG picks span starts per row, returns a bool array of shape (B, T)."""
    bsz, all_sz = shape
    mask = np.full((bsz, all_sz), False)
    num_mask = max(1, int(mask_prob * all_sz / float(mask_length) + np.random.rand()))
    for i in range(bsz):
        starts = np.random.choice(all_sz - mask_length, num_mask, replace=False)
        idx = np.asarray([s + j for s in starts for j in range(mask_length)])
        mask[i, idx[idx < all_sz]] = True
    return mask


def compute_mask_indices_torch(shape: tuple[int, int], mask_prob: float, mask_length: int, device=None) -> torch.Tensor:
    """The same span masking drawn with the torch RNG and widened with a max-pool: a bool tensor (B, T), no host data."""
    bsz, all_sz = shape
    start_prob = mask_prob / mask_length
    starts = (torch.rand(bsz, all_sz, device=device) < start_prob).float()
    spans = nn.functional.max_pool1d(
        nn.functional.pad(starts.unsqueeze(1), (mask_length - 1, 0)), kernel_size=mask_length, stride=1
    )
    return spans.squeeze(1) > 0


# --- optimum BetterTransformer-style encoder layer -------------------------------------------------------------


class BetterTransformerEncoderLayer(nn.Module):
    """Inference fast path in the style of optimum's BertLayerBetterTransformer: with a padding mask it packs the
    batch into a nested tensor with torch._nested_tensor_from_mask and unpacks it at the end."""

    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.out_proj = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = nn.functional.scaled_dot_product_attention(q, k, v)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        if attention_mask is not None:
            # optimum: hidden_states = torch._nested_tensor_from_mask(hidden_states, ~attention_mask)
            hidden = torch._nested_tensor_from_mask(hidden, attention_mask)
            hidden = hidden.to_padded_tensor(0.0)
        hidden = self.norm1(hidden + self.attention(hidden))
        return self.norm2(hidden + self.ff(hidden))
