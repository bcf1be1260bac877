"""Hazard: a SmolVLA-style policy builds its prefix/suffix attention mask through the shared `make_att_2d_masks` helper, which the library marks `@torch.compiler.disable` to keep a miscompiled cumsum out of inductor graphs; every compiled training forward then graph-breaks at the helper call. From huggingface/lerobot#4179 (keep make_att_2d_masks out of torch.compile graphs: one graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import make_att_2d_masks

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/lerobot/pull/4179"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class SmolVLAFlowMatching(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.vlm_embed = nn.Linear(dim, dim)
        self.action_in_proj = nn.Linear(dim, dim)
        self.action_time_mlp = nn.Linear(dim + 1, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.action_out_proj = nn.Linear(dim, dim)

    def embed_prefix(self, images: torch.Tensor, img_masks: torch.Tensor):
        embs = self.vlm_embed(images)
        att_masks = torch.zeros_like(img_masks, dtype=torch.long)
        return embs, img_masks, att_masks

    def embed_suffix(self, noisy_actions: torch.Tensor, time: torch.Tensor):
        a = self.action_in_proj(noisy_actions)
        t = time[:, None, None].expand(-1, a.shape[1], 1)
        embs = self.action_time_mlp(torch.cat([a, t], dim=-1))
        pad = torch.ones(embs.shape[:2], dtype=torch.bool)
        att = torch.ones(embs.shape[:2], dtype=torch.long)
        return embs, pad, att

    def forward(self, images, img_masks, actions, noise, time):
        x_t = time[:, None, None] * noise + (1 - time[:, None, None]) * actions
        u_t = noise - actions
        prefix_embs, prefix_pad, prefix_att = self.embed_prefix(images, img_masks)
        suffix_embs, suffix_pad, suffix_att = self.embed_suffix(x_t, time)
        pad_masks = torch.cat([prefix_pad, suffix_pad], dim=1)
        att_masks = torch.cat([prefix_att, suffix_att], dim=1)
        att_2d_masks = make_att_2d_masks(pad_masks, att_masks)
        h = torch.cat([prefix_embs, suffix_embs], dim=1)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        scores = (q @ k.transpose(-1, -2)).masked_fill(~att_2d_masks, -1e9)
        out = torch.softmax(scores, dim=-1) @ v
        v_t = self.action_out_proj(out[:, -actions.shape[1]:])
        return ((u_t - v_t) ** 2).mean()


def build() -> nn.Module:
    return SmolVLAFlowMatching()


def step(model: nn.Module, i: int) -> None:
    images = torch.randn(2, 5, 8)
    img_masks = torch.ones(2, 5, dtype=torch.bool)
    actions = torch.randn(2, 3, 8)
    noise = torch.randn(2, 3, 8)
    time = torch.rand(2)
    model(images, img_masks, actions, noise, time).backward()
