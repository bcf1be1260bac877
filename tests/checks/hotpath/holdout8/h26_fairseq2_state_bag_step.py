"""Hazard: a fairseq2-style incremental decoder is compiled and driven by a sequence generator that passes an `IncrementalStateBag` into every call and advances it with `state_bag.increment_step_nr()` after each token; the decoder reads `state_bag.step_nr` (a Python int) to pick the position encoding, so a new step number fails the guard and recompiles (the report hit the cache limit everywhere; on torch 2.13 the int is made dynamic after one recompile). From pytorch/pytorch#114373 (torch.compile support for SeamlessM4T in fairseq2: generation slowly hits the cache limit everywhere)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import IncrementalStateBag

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/114373"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class SinusoidalPositionEncoder(nn.Module):
    def __init__(self, dim: int, max_seq_len: int) -> None:
        super().__init__()
        pos = torch.arange(max_seq_len).float().unsqueeze(1)
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        table = torch.cat([torch.sin(pos * inv), torch.cos(pos * inv)], dim=-1)
        self.register_buffer("freqs", table, persistent=False)

    def forward(self, seqs: torch.Tensor, state_bag: IncrementalStateBag | None = None) -> torch.Tensor:
        start_step = 0 if state_bag is None else state_bag.step_nr
        return seqs + self.freqs[start_step : start_step + seqs.shape[1]]


class TransformerDecoderModel(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos_encoder = SinusoidalPositionEncoder(dim, 64)
        self.layer = nn.Linear(dim, dim)
        self.final_proj = nn.Linear(dim, vocab)

    def forward(self, seqs: torch.Tensor, state_bag: IncrementalStateBag) -> torch.Tensor:
        x = self.pos_encoder(self.embed(seqs), state_bag)
        return self.final_proj(torch.relu(self.layer(x)))


class SequenceGenerator:
    def __init__(self) -> None:
        self.state_bag = IncrementalStateBag(max_num_steps=64)
        self.prev = torch.tensor([[3]])


_generators: dict[int, SequenceGenerator] = {}


def build() -> nn.Module:
    model = TransformerDecoderModel().eval()
    _generators[id(model)] = SequenceGenerator()
    return model


def step(model: nn.Module, i: int) -> None:
    gen = _generators[id(model)]
    with torch.no_grad():
        logits = model(gen.prev, gen.state_bag)
    gen.state_bag.increment_step_nr()
    gen.prev = logits[:, -1:].argmax(-1)
