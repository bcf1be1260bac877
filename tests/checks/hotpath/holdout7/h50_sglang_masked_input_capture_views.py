"""Hazard: SGLang's tensor-parallel `VocabParallelEmbedding` runs `get_masked_input_and_mask` compiled; during CUDA-graph capture `input_ids` is a slice of a pre-allocated buffer (a view whose `_base` is bigger) starting at batch size 1, later real batches are fresh tensors of other sizes, so the size-1 capture is specialised and the next capture size recompiles the embedding at startup on every rank (the report also saw a `_base` size guard fail; under torch 2.13 with default dynamic only the 0/1 specialisation recompile shows). From sgl-project/sglang#23428 (fix get_masked_input_and_mask recompile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/sgl-project/sglang/pull/23428"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


def get_masked_input_and_mask(input_: torch.Tensor, org_vocab_start_index: int, org_vocab_end_index: int,
                              num_org_vocab_padding: int, added_vocab_start_index: int,
                              added_vocab_end_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    org_vocab_mask = (input_ >= org_vocab_start_index) & (input_ < org_vocab_end_index)
    added_vocab_mask = (input_ >= added_vocab_start_index) & (input_ < added_vocab_end_index)
    added_offset = added_vocab_start_index - (org_vocab_end_index - org_vocab_start_index) - num_org_vocab_padding
    valid_offset = (org_vocab_start_index * org_vocab_mask) + (added_offset * added_vocab_mask)
    vocab_mask = org_vocab_mask | added_vocab_mask
    input_ = vocab_mask * (input_ - valid_offset)
    return input_, ~vocab_mask


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings: int = 64, embedding_dim: int = 8, tp_rank: int = 1, tp_size: int = 2) -> None:
        super().__init__()
        per_partition = num_embeddings // tp_size
        self.org_vocab_start_index = tp_rank * per_partition
        self.org_vocab_end_index = self.org_vocab_start_index + per_partition
        self.weight = nn.Parameter(torch.randn(per_partition, embedding_dim))

    def forward(self, input_: torch.Tensor) -> torch.Tensor:
        masked_input, input_mask = get_masked_input_and_mask(
            input_, self.org_vocab_start_index, self.org_vocab_end_index, 0, 64, 64)
        output_parallel = nn.functional.embedding(masked_input.long(), self.weight)
        output_parallel.masked_fill_(input_mask.unsqueeze(-1), 0)
        return output_parallel  # tensor_model_parallel_all_reduce follows on a real TP group


class Qwen35Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding()
        self.norm = nn.RMSNorm(8)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.norm(self.embed_tokens(input_ids))


REGION = "embed_tokens"


def build() -> nn.Module:
    return Qwen35Model()


class CudaGraphRunner:
    capture_bs = [1, 2, 4, 8]

    def __init__(self, max_bs: int = 16) -> None:
        self.input_ids = torch.zeros(max_bs, dtype=torch.int32)  # pre-allocated capture buffer

    def capture_one_batch_size(self, model: nn.Module, bs: int) -> None:
        model(self.input_ids[:bs])


RUNNER = CudaGraphRunner()
SERVED_BATCHES = [3, 5, 6, 7]


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        if i < len(RUNNER.capture_bs):
            RUNNER.capture_one_batch_size(model, RUNNER.capture_bs[i])
        else:
            model(torch.randint(0, 64, (SERVED_BATCHES[i - len(RUNNER.capture_bs)],), dtype=torch.int32))
