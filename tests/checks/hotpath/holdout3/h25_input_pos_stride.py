"""Hazard: the generation loop passes `input_pos` as a one-column slice of a position buffer that grows by one token per step, so the slice's shape stays [B, 1] but its row stride changes every call and Dynamo recompiles on the stride guard. From meta-pytorch/torchtune#1402 (`tensor 'L['input_pos']' stride mismatch at index 0`)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/meta-pytorch/torchtune/issues/1402"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class TinyDecoder(nn.Module):
    def __init__(self, vocab: int = 16, max_seq_len: int = 32) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, 8)
        self.pos = nn.Embedding(max_seq_len, 8)
        self.out = nn.Linear(8, vocab)

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        return self.out(self.tok(tokens) + self.pos(input_pos))


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.decoder = TinyDecoder()
        self.prompt_len = 4

    def generate_next_token(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        return self.decoder(tokens, input_pos)[:, -1].argmax(-1, keepdim=True)


REGION = "decoder"


def build() -> nn.Module:
    return Generator()


def step(model: nn.Module, i: int) -> None:
    # torchtune's batched generation: positions are recomputed for the whole padded sequence each step
    seq_len = model.prompt_len + i
    padded_pos = torch.arange(seq_len).expand(2, seq_len).contiguous()
    tokens = torch.randint(0, 16, (2, seq_len))
    with torch.no_grad():
        model.generate_next_token(tokens[:, -1:], padded_pos[:, -1:])
