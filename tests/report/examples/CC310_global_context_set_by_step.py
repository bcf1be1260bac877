"""CC310: an engine's loop installs per-step metadata in a process-wide context (vLLM's `set_forward_context`,
SGLang's global batch) and the compiled attention reads a Python int from it through a getter: a new value every
call, a recompile every call. A context slot read only for its tensor fields is not reported: Dynamo guards a
tensor by its shape, not its values."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class DecodeMetadata:
    max_seq_len: int
    seq_lens: torch.Tensor


@dataclass
class TensorMetadata:
    seq_lens: torch.Tensor


@dataclass
class ForwardContext:
    decode: DecodeMetadata | None = None
    tensors: TensorMetadata | None = None


_CONTEXT = ForwardContext()


def get_forward_context() -> ForwardContext:
    assert _CONTEXT is not None
    return _CONTEXT


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        meta = get_forward_context().decode
        scratch = torch.zeros(q.shape[0], meta.max_seq_len)
        lens = get_forward_context().tensors.seq_lens
        return self.proj(q) * (scratch.sum(-1, keepdim=True) + lens[:, None])


def build() -> nn.Module:
    return Attention()


def step(model, i):
    lens = torch.tensor([3 + i, 2 + i])
    get_forward_context().decode = DecodeMetadata(max_seq_len=4 + i, seq_lens=lens)  # expect: CC310 warning
    get_forward_context().tensors = TensorMetadata(seq_lens=lens)
    with torch.no_grad():
        return model(torch.randn(2, 8))
