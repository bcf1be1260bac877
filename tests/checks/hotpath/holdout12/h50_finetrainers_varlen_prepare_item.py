"""Hazard: finetrainers' attention dispatcher prepares the varlen metadata inside every attention call (`seqlens_k = attn_mask.sum(1)`, cumulative offsets, `max_seqlen_q = seqlens_q.max().item()`), so each transformer block of the compiled model hits the `.item()` and breaks the graph, although the values never change between blocks. From huggingface/finetrainers#377 (Support flash/flex/xformers/sage attention: "a graph break at every layer")."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/finetrainers/pull/377"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 6}


def _prepare_for_flash_attn_or_sage_varlen(batch_size: int, seq_len_q: int, seq_len_kv: int, attn_mask: torch.Tensor):
    seqlens_q = torch.full((batch_size,), seq_len_q, dtype=torch.int32)
    seqlens_k = attn_mask.sum(dim=1, dtype=torch.int32)
    cu_seqlens_q = torch.zeros(batch_size + 1, dtype=torch.int32)
    cu_seqlens_k = torch.zeros(batch_size + 1, dtype=torch.int32)
    cu_seqlens_q[1:] = torch.cumsum(seqlens_q, dim=0)
    cu_seqlens_k[1:] = torch.cumsum(seqlens_k, dim=0)
    max_seqlen_q = seqlens_q.max().item()
    max_seqlen_k = seqlens_k.max().item()
    return (seqlens_q, seqlens_k), (cu_seqlens_q, cu_seqlens_k), (max_seqlen_q, max_seqlen_k)


def _flash_varlen_attention(query, key, value, attn_mask: torch.Tensor) -> torch.Tensor:
    batch_size, _, seq_len_q, _ = query.shape
    _, _, (max_seqlen_q, max_seqlen_k) = _prepare_for_flash_attn_or_sage_varlen(
        batch_size, seq_len_q, key.shape[2], attn_mask
    )
    key, value = key[:, :, :max_seqlen_k], value[:, :, :max_seqlen_k]
    mask = attn_mask[:, None, None, :max_seqlen_k]
    return F.scaled_dot_product_attention(query[:, :, :max_seqlen_q], key, value, attn_mask=mask)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        b, s, d = hidden_states.shape
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in self.to_qkv(hidden_states).chunk(3, -1))
        out = _flash_varlen_attention(q, k, v, attention_mask).transpose(1, 2).reshape(b, s, d)
        return hidden_states + self.to_out(out)


class LTXVideoTransformer(nn.Module):
    def __init__(self, num_layers: int = 2) -> None:
        super().__init__()
        self.transformer_blocks = nn.ModuleList(TransformerBlock() for _ in range(num_layers))

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, attention_mask)
        return hidden_states


def build() -> nn.Module:
    return LTXVideoTransformer()


def step(model: nn.Module, i: int) -> None:
    attention_mask = torch.ones(2, 6, dtype=torch.bool)
    attention_mask[1, 4:] = False  # second prompt padded
    model(torch.randn(2, 6, 8), attention_mask).sum().backward()
