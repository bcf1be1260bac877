"""Hazard: a speechbrain-style recipe compiles its encoder and feeds it `PaddedBatch` features padded by the collator to the longest utterance of each batch, together with relative `wav_lens`; the time dimension changes from batch to batch, so the encoder recompiles on the new length (then goes dynamic). From speechbrain/speechbrain#1947 (the compiler dislikes sequences changing lengths every batch and triggers recompiles)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import batch_pad_right

LABEL = "shape"
SOURCE = "https://github.com/speechbrain/speechbrain/pull/1947"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

UTTERANCE_FRAMES = [(5, 7), (6, 9), (4, 4), (10, 3), (7, 8), (12, 6), (5, 5), (9, 11)]


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
    """A speechbrain Brain's `modules` dict: the compiled encoder plus a CTC head."""

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
    batch = batch_pad_right(utterances)  # pad to the longest utterance of this batch
    model.compute_forward(batch.data, batch.lengths).mean().backward()
