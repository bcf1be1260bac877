"""Clean: the same vLLM decode attention with the workaround from pytorch/pytorch#132849: the model runner puts `max_decode_seq_len` into the metadata as a 0-d tensor and the op masks with it instead of slicing by a Python int, so the growing sequence length never reaches a guard."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import TensorSeqLenMetadata

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/132849"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LlamaDecoderAttention(nn.Module):
    def __init__(self, hidden: int = 8, max_model_len: int = 32) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.register_buffer("key_cache", torch.zeros(max_model_len, hidden), persistent=False)
        self.register_buffer("value_cache", torch.zeros(max_model_len, hidden), persistent=False)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, attn_metadata: TensorSeqLenMetadata):
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        self.key_cache.index_copy_(0, positions, k)
        self.value_cache.index_copy_(0, positions, v)
        slots = torch.arange(self.key_cache.shape[0])
        mask = slots[None, :] < attn_metadata.max_decode_seq_len
        scores = (q @ self.key_cache.t()).masked_fill(~mask, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ self.value_cache)


def build() -> nn.Module:
    return LlamaDecoderAttention()


class ModelRunner:
    prompt_len = 5

    def prepare_decode(self, step: int) -> tuple[torch.Tensor, TensorSeqLenMetadata]:
        seq_len = self.prompt_len + step + 1
        positions = torch.tensor([seq_len - 1])
        meta = TensorSeqLenMetadata(num_decode_tokens=1, seq_lens_tensor=torch.tensor([seq_len]),
                                    max_decode_seq_len=torch.tensor(seq_len),
                                    block_tables=torch.zeros(1, 1, dtype=torch.long))
        return positions, meta


RUNNER = ModelRunner()


def step(model: nn.Module, i: int) -> None:
    positions, attn_metadata = RUNNER.prepare_decode(i)
    with torch.no_grad():
        model(positions, torch.randn(1, 8), attn_metadata)
