"""Clean: the fixed vLLM FlexAttention path for a hybrid sliding/global model: every layer uses the same sliding-window mask function with the window held as a tensor (the max model length for global layers), and `doc_ids` is padded to a fixed token budget each step, so neither the mask function nor the shapes change and the layer region is traced once. Look-alike of vllm-project/vllm#57300."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import dense_mask_from_mod

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/57300"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


@dataclass
class FlexAttentionMetadata:
    doc_ids: torch.Tensor  # one entry per scheduled token

    def get_mask_mod(self, window: torch.Tensor):
        doc_ids = self.doc_ids

        def final_mask_mod(b, h, q_idx, kv_idx):
            in_window = (q_idx >= kv_idx) & (q_idx - kv_idx < window)
            return in_window & (doc_ids[q_idx] == doc_ids[kv_idx])

        return final_mask_mod


class Attention(nn.Module):
    def __init__(self, dim: int, sliding_window: int | None, max_model_len: int = 16) -> None:
        super().__init__()
        # global layers get a window as long as the model's context, so all layers share one mask function
        self.register_buffer("window", torch.tensor(max_model_len if sliding_window is None else sliding_window))
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        mask = dense_mask_from_mod(attn_metadata.get_mask_mod(self.window), x.shape[0], x.shape[0])
        scores = (q @ k.t()).masked_fill(~mask, float("-inf"))
        return self.o_proj(F.softmax(scores, dim=-1) @ v)


class Gemma3DecoderLayer(nn.Module):
    def __init__(self, dim: int, sliding_window: int | None) -> None:
        super().__init__()
        self.self_attn = Attention(dim, sliding_window)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        x = x + self.self_attn(x, attn_metadata)
        return x + self.mlp(x)


class Gemma3Model(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 4, sliding_window: int = 4) -> None:
        super().__init__()
        # every second layer is a global layer, the others use local sliding-window attention
        self.layers = nn.ModuleList(
            Gemma3DecoderLayer(dim, None if (j + 1) % 2 == 0 else sliding_window) for j in range(num_layers)
        )

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, attn_metadata)
        return x


REGION = "layers.*"


def build() -> nn.Module:
    return Gemma3Model()


def step(model: nn.Module, i: int) -> None:
    docs = [(3, 3), (4, 2), (2, 5), (3, 3), (6, 2), (4, 4), (1, 5), (3, 3)][i]  # scheduled requests' tokens
    doc_ids = torch.cat([torch.full((n,), j) for j, n in enumerate(docs)])
    doc_ids = F.pad(doc_ids, (0, 8 - doc_ids.shape[0]), value=-1)  # padded to the token budget: fixed shape
    with torch.no_grad():
        model(torch.randn(8, 8), FlexAttentionMetadata(doc_ids=doc_ids))
