"""Clean: the same fairseq2-style incremental decoder and sequence generator, but the state bag keeps `step_nr` as a 0-d tensor advanced in place and the position encoder gathers its rows with `index_select(step_nr + arange(len))`, so no Python int reaches the compiled decoder and it compiles once. Look-alike of h26, from pytorch/pytorch#114373."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import TensorStepStateBag

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/114373"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SinusoidalPositionEncoder(nn.Module):
    def __init__(self, dim: int, max_seq_len: int) -> None:
        super().__init__()
        pos = torch.arange(max_seq_len).float().unsqueeze(1)
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        table = torch.cat([torch.sin(pos * inv), torch.cos(pos * inv)], dim=-1)
        self.register_buffer("freqs", table, persistent=False)

    def forward(self, seqs: torch.Tensor, state_bag: TensorStepStateBag | None = None) -> torch.Tensor:
        steps = torch.arange(seqs.shape[1])
        if state_bag is not None:
            steps = steps + state_bag.step_nr
        return seqs + torch.index_select(self.freqs, 0, steps)


class TransformerDecoderModel(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos_encoder = SinusoidalPositionEncoder(dim, 64)
        self.layer = nn.Linear(dim, dim)
        self.final_proj = nn.Linear(dim, vocab)

    def forward(self, seqs: torch.Tensor, state_bag: TensorStepStateBag) -> torch.Tensor:
        x = self.pos_encoder(self.embed(seqs), state_bag)
        return self.final_proj(torch.relu(self.layer(x)))


class SequenceGenerator:
    def __init__(self) -> None:
        self.state_bag = TensorStepStateBag(max_num_steps=64)
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
