"""Hazard: vLLM's CPU/IPEX decode path hands the attention op an `attn_metadata` whose `max_decode_seq_len` is a Python int that grows by one with every generated token; the paged-attention wrapper sizes its partition scratch from it, so the second decode step fails the guard on the int and recompiles (on torch 2.13 automatic-dynamic then makes it symbolic; the report saw one recompile per token). From pytorch/pytorch#132849 (recompilation for each next token when applying torch.compile to vLLM)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import PagedAttention, TorchSDPAMetadata

LABEL = "int-arg"
SOURCE = "https://github.com/pytorch/pytorch/issues/132849"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LlamaDecoderAttention(nn.Module):
    def __init__(self, hidden: int = 8, max_model_len: int = 32) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.register_buffer("key_cache", torch.zeros(max_model_len, hidden), persistent=False)
        self.register_buffer("value_cache", torch.zeros(max_model_len, hidden), persistent=False)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, attn_metadata: TorchSDPAMetadata):
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        self.key_cache.index_copy_(0, positions, k)
        self.value_cache.index_copy_(0, positions, v)
        out = PagedAttention.forward_decode(q, self.key_cache, self.value_cache, attn_metadata.block_tables,
                                            attn_metadata.seq_lens_tensor, attn_metadata.max_decode_seq_len)
        return self.o_proj(out)


def build() -> nn.Module:
    return LlamaDecoderAttention()


class ModelRunner:
    """Builds the metadata for one decode step of a single running sequence (prompt of 5 tokens)."""

    prompt_len = 5

    def prepare_decode(self, step: int) -> tuple[torch.Tensor, TorchSDPAMetadata]:
        seq_len = self.prompt_len + step + 1
        positions = torch.tensor([seq_len - 1])
        meta = TorchSDPAMetadata(num_prefills=0, num_decode_tokens=1, seq_lens_tensor=torch.tensor([seq_len]),
                                 max_decode_seq_len=seq_len, block_tables=torch.zeros(1, 1, dtype=torch.long))
        return positions, meta


RUNNER = ModelRunner()


def step(model: nn.Module, i: int) -> None:
    positions, attn_metadata = RUNNER.prepare_decode(i)
    with torch.no_grad():
        model(positions, torch.randn(1, 8), attn_metadata)
