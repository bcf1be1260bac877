"""Clean: the same Flux-style blocks compiled one by one, but the SageAttention dispatcher is called through a `torch.library.custom_op` with a fake implementation (the fix in the report), so the GPU probing runs inside an opaque op and each block compiles as one graph. From vllm-project/vllm-omni#7740."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13 import _helpers_b as sage

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm-omni/pull/7740"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "double_blocks.*"

DIM, HEADS = 8, 2


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """comfy/ldm/flux/math.py-style attention(): the optimized backend is chosen once at startup."""
    x = sage.sageattn_op(q, k, v, tensor_layout="HND")
    return x.transpose(1, 2).reshape(x.shape[0], -1, DIM)


class DoubleStreamBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.img_qkv = nn.Linear(DIM, 3 * DIM)
        self.txt_qkv = nn.Linear(DIM, 3 * DIM)
        self.img_proj = nn.Linear(DIM, DIM)
        self.txt_proj = nn.Linear(DIM, DIM)

    def _heads(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        b, n, _ = t.shape
        return tuple(t.reshape(b, n, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4))

    def forward(self, img: torch.Tensor, txt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        iq, ik, iv = self._heads(self.img_qkv(img))
        tq, tk, tv = self._heads(self.txt_qkv(txt))
        q, k, v = torch.cat((tq, iq), dim=2), torch.cat((tk, ik), dim=2), torch.cat((tv, iv), dim=2)
        attn = attention(q, k, v)
        txt_attn, img_attn = attn[:, : txt.shape[1]], attn[:, txt.shape[1] :]
        return img + self.img_proj(img_attn), txt + self.txt_proj(txt_attn)


class Flux(nn.Module):
    def __init__(self, depth: int = 2) -> None:
        super().__init__()
        self.img_in = nn.Linear(DIM, DIM)
        self.txt_in = nn.Linear(DIM, DIM)
        self.double_blocks = nn.ModuleList(DoubleStreamBlock() for _ in range(depth))
        self.final_layer = nn.Linear(DIM, DIM)

    def forward(self, img: torch.Tensor, txt: torch.Tensor) -> torch.Tensor:
        img, txt = self.img_in(img), self.txt_in(txt)
        for block in self.double_blocks:
            img, txt = block(img, txt)
        return self.final_layer(img)


def build() -> nn.Module:
    return Flux().eval()


def step(model: nn.Module, i: int) -> None:
    # one sampler step: the compiled double blocks (compile node on the blocks) run for each sigma
    with torch.no_grad():
        model(torch.randn(1, 6, DIM), torch.randn(1, 3, DIM))
