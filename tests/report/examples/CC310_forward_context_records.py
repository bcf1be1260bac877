"""CC310: an engine installs a new metadata record in a process-wide forward context around each compiled call
(vLLM's `set_forward_context`, which puts the previous one back). Dynamo guards the record's type and the Python
fields the compiled code reads, not its identity: a field the step changes every call (`max_decode_seq_len`) is a
recompile per value; the same record read only for fields that stay the same (`num_decode_tokens`) is not, nor is
a record assigned to a module attribute every call and read only for a tensor (`seq_lens`)."""
import contextlib
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class DecodeMetadata:
    num_decode_tokens: int
    max_decode_seq_len: int


@dataclass
class PrefillMetadata:
    seq_lens: torch.Tensor
    num_prefills: int


@dataclass
class ForwardContext:
    attn_metadata: DecodeMetadata | None = None


_forward_context = ForwardContext()


def get_forward_context() -> ForwardContext:
    return _forward_context


@contextlib.contextmanager
def set_forward_context(meta: DecodeMetadata):
    previous = _forward_context.attn_metadata
    _forward_context.attn_metadata = meta  # expect: CC310 warning
    try:
        yield
    finally:
        _forward_context.attn_metadata = previous


class PagedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.prefill: PrefillMetadata | None = None

    def forward(self, q):
        meta = get_forward_context().attn_metadata
        scratch = torch.zeros(q.shape[0], meta.max_decode_seq_len)
        lens = self.prefill.seq_lens
        return self.proj(q) + scratch.sum(-1, keepdim=True) + lens.sum()


def build() -> nn.Module:
    return PagedAttention()


def step(model, i):
    meta = DecodeMetadata(num_decode_tokens=2, max_decode_seq_len=5 + 4 * i)
    model.prefill = PrefillMetadata(seq_lens=torch.tensor([3 + i, 4]), num_prefills=1 + i)
    with set_forward_context(meta), torch.no_grad():
        model(torch.randn(2, 8))
