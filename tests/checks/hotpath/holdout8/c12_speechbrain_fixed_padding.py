"""Clean: the same speechbrain-style recipe, but its collator pads every batch to one fixed number of frames (the recipe's maximum utterance length) and passes the true lengths in the relative `wav_lens` tensor, so the compiled encoder always sees one shape and compiles once. Look-alike of h24, from speechbrain/speechbrain#1947."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import batch_pad_right

LABEL = None
SOURCE = "https://github.com/speechbrain/speechbrain/pull/1947"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

UTTERANCE_FRAMES = [(5, 7), (6, 9), (4, 4), (10, 3), (7, 8), (12, 6), (5, 5), (9, 11)]
MAX_FRAMES = 12


class ConformerLiteEncoder(nn.Module):
    def __init__(self, n_feats: int) -> None:
        super().__init__()
        self.ffn_in = nn.Linear(n_feats, 8)
        self.conv = nn.Conv1d(8, 8, 3, padding=1)
        self.ffn_out = nn.Linear(8, 8)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = nn.functional.leaky_relu(self.ffn_in(feats))
        x = x + self.conv(x.transpose(1, 2)).transpose(1, 2)
        return self.ffn_out(x)


class Brain(nn.Module):
    def __init__(self, n_feats: int = 8, n_tokens: int = 6) -> None:
        super().__init__()
        self.encoder = ConformerLiteEncoder(n_feats)
        self.ctc_lin = nn.Linear(8, n_tokens)

    def compute_forward(self, feats: torch.Tensor, wav_lens: torch.Tensor) -> torch.Tensor:
        mask = torch.arange(feats.shape[1]).unsqueeze(0) < (wav_lens * feats.shape[1]).unsqueeze(1)
        enc = self.encoder(feats) * mask.unsqueeze(-1)
        return self.ctc_lin(enc).log_softmax(-1)


REGION = "encoder"


def build() -> nn.Module:
    return Brain()


def step(model: nn.Module, i: int) -> None:
    utterances = [torch.randn(n, 8) for n in UTTERANCE_FRAMES[i]]
    batch = batch_pad_right(utterances, pad_to=MAX_FRAMES)
    model.compute_forward(batch.data, batch.lengths).mean().backward()
