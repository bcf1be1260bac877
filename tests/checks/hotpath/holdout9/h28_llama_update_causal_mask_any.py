"""Hazard: Llama's `_update_causal_mask` (SDPA path) checks `torch.any(attention_mask != 1)` to decide whether to unmask fully-masked rows, a data-dependent Python branch on a tensor inside the compiled forward, so Dynamo graph-breaks on every call with a padding mask. From huggingface/transformers#29211 (fix torch.compile with fullgraph=True when attention_mask input is used)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/pull/29211"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class LlamaConfig:
    _attn_implementation = "sdpa"
    hidden_size = 8
    vocab_size = 32


class LlamaModel(nn.Module):
    def __init__(self, config: LlamaConfig = LlamaConfig()) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def _update_causal_mask(self, attention_mask: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        dtype = input_tensor.dtype
        min_dtype = torch.finfo(dtype).min
        seq_len = input_tensor.shape[1]
        causal_mask = torch.full((seq_len, seq_len), fill_value=min_dtype, dtype=dtype).triu(1)
        causal_mask = causal_mask[None, None].expand(input_tensor.shape[0], 1, -1, -1).clone()
        padding_mask = attention_mask[:, None, None, :].eq(0)
        causal_mask = causal_mask.masked_fill(padding_mask, min_dtype)
        is_tracing = torch.jit.is_tracing() or isinstance(input_tensor, torch.fx.Proxy)
        if self.config._attn_implementation == "sdpa" and not is_tracing and torch.any(attention_mask != 1):
            # attend to all tokens in fully masked rows (memory-efficient SDPA path requirement)
            causal_mask = causal_mask.mul(~torch.all(causal_mask == min_dtype, dim=-1, keepdim=True))
        return causal_mask

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        mask = self._update_causal_mask(attention_mask, h)
        q, k, v = self.qkv(h).unsqueeze(1).chunk(3, dim=-1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.squeeze(1))


def build() -> nn.Module:
    return LlamaModel()


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 32, (2, 6))
    attention_mask = torch.ones(2, 6, dtype=torch.long)
    attention_mask[1, : (i % 3) + 1] = 0  # left padding from the tokenizer
    with torch.no_grad():
        model(input_ids, attention_mask)
