"""Hazard: a compiled decode step runs a transformers-style `LogitsProcessorList` whose processors take `cur_len` as a Python int (the length generated so far, passed in by the generation loop); `MinLengthLogitsProcessor` branches on `cur_len < self.min_length` and `NoRepeatNGram`-style slicing uses it, so a new length fails a guard and recompiles (on torch 2.13 the int goes dynamic after one recompile, and crossing `min_length` recompiles again). From huggingface/transformers#29018 (Make LogitsProcessor compatible with torch.compile: `cur_len` as int causes recompilation every time the processor is called)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "int-arg"
SOURCE = "https://github.com/huggingface/transformers/pull/29018"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class MinLengthLogitsProcessor:
    def __init__(self, min_length: int, eos_token_id: int) -> None:
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, cur_len: int) -> torch.Tensor:
        if cur_len < self.min_length:
            scores = scores.clone()
            scores[:, self.eos_token_id] = -float("inf")
        return scores


class RepetitionPenaltyLogitsProcessor:
    def __init__(self, penalty: float) -> None:
        self.penalty = penalty

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, cur_len: int) -> torch.Tensor:
        prev = input_ids[:, :cur_len]  # only the tokens generated so far in the preallocated buffer
        score = torch.gather(scores, 1, prev)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, prev, score)


class LogitsProcessorList(list):
    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, cur_len: int) -> torch.Tensor:
        for processor in self:
            scores = processor(input_ids, scores, cur_len)
        return scores


class DecodeStep(nn.Module):
    """One greedy step over a static, preallocated token buffer (the part the generation loop compiles)."""

    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)
        self.logits_processor = LogitsProcessorList(
            [MinLengthLogitsProcessor(min_length=4, eos_token_id=2), RepetitionPenaltyLogitsProcessor(1.3)]
        )

    def forward(self, input_ids: torch.Tensor, last_token: torch.Tensor, cur_len: int) -> torch.Tensor:
        scores = self.lm_head(torch.tanh(self.embed(last_token)))
        scores = self.logits_processor(input_ids, scores, cur_len)
        return scores.argmax(-1)


_buffers: dict[int, torch.Tensor] = {}


def build() -> nn.Module:
    model = DecodeStep().eval()
    buf = torch.zeros(1, 16, dtype=torch.long)
    buf[0, 0] = 1
    _buffers[id(model)] = buf
    return model


def step(model: nn.Module, i: int) -> None:
    buf = _buffers[id(model)]
    cur_len = i + 1
    with torch.no_grad():
        next_token = model(buf, buf[:, cur_len - 1], cur_len)
    buf[0, cur_len] = next_token[0]
