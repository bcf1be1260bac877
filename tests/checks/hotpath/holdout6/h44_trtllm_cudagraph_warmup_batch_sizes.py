"""Hazard: TensorRT-LLM AutoDeploy warms up its compiled decode model once for every entry of `cuda_graph_batch_sizes` before capturing CUDA graphs, so each warmup call arrives with a new batch dimension in `input_ids`/`input_pos` and the frame is recompiled for the new shape (with static shapes, once per batch size until `recompile_limit (8)` is hit). From NVIDIA/TensorRT-LLM#6142 (Optimize torch.compile's recompilation limit)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import SequenceInfo

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/issues/6142"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class DecodeModel(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, max_seq_len: int = 16) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.pos_embed = nn.Embedding(max_seq_len, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids) + self.pos_embed(input_pos).unsqueeze(1)
        h = h + self.mlp(h)
        return self.lm_head(h)


class AutoDeployEngine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = DecodeModel()
        self.sequence_info = SequenceInfo()


REGION = "model"


def build() -> nn.Module:
    return AutoDeployEngine()


def step(model: nn.Module, i: int) -> None:
    # CapturedGraph warmup: one forward per cuda-graph batch size (largest first in the real code)
    batch_size = model.sequence_info.cuda_graph_batch_sizes[::-1][i]
    input_ids = model.sequence_info.nest_sequences(batch_size)
    with torch.no_grad():
        model.model(*model.sequence_info.args_for_batch(input_ids))
