"""Library-style code shared by author A's hold-out 16 cases (stand-ins for torchao, fairseq2, torchrec,
torchaudio and OpenNMT-py code). Nothing here is a case by itself."""
from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn

E4M3_MAX = 448.0


# --- torchao float8 training (delayed scaling), reduced -------------------------------------------------------------
class Float8LinearDelayed(nn.Linear):
    """`torchao.float8.Float8Linear` with delayed scaling for the input: an amax buffer and a history, a lazily
    initialised amax, and pre/post-forward bookkeeping flags."""

    def __init__(self, in_features: int, out_features: int, *, init_in_forward: bool = True) -> None:
        super().__init__(in_features, out_features)
        self.register_buffer("fp8_amax_x", torch.tensor(E4M3_MAX))
        self.register_buffer("fp8_amax_history_x", torch.zeros(4))
        self.register_buffer("fp8_scale_x", torch.tensor(1.0))
        self.is_amax_initialized = False
        self.amax_and_scale_synced = False
        self.init_in_forward = init_in_forward

    def cast_x_to_float8(self, x: torch.Tensor) -> torch.Tensor:
        if self.init_in_forward and not self.is_amax_initialized:
            with torch.no_grad():
                self.fp8_amax_x.copy_(x.detach().abs().max())
                self.fp8_scale_x.copy_(E4M3_MAX / torch.clamp(self.fp8_amax_x, min=1e-12))
            self.is_amax_initialized = True  # lazy init flag flipped by the compiled forward
        with torch.no_grad():
            self.fp8_amax_x.copy_(x.detach().abs().max())  # this step's amax, read by the next sync
        scaled = (x * self.fp8_scale_x).clamp(-E4M3_MAX, E4M3_MAX)
        return scaled / self.fp8_scale_x  # the simulated float8 round trip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(self.cast_x_to_float8(x), self.weight, self.bias)


def swap_linear_with_float8_linear(module: nn.Module, *, init_in_forward: bool = True) -> nn.Module:
    """Replace every nn.Linear child by a Float8LinearDelayed carrying the same weights."""
    for name, child in list(module.named_children()):
        if type(child) is nn.Linear:
            new = Float8LinearDelayed(child.in_features, child.out_features, init_in_forward=init_in_forward)
            new.load_state_dict(child.state_dict(), strict=False)
            setattr(module, name, new)
        else:
            swap_linear_with_float8_linear(child, init_in_forward=init_in_forward)
    return module


@torch.no_grad()
def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    """Called by the training loop once per step, outside the compiled forward: roll the amax history, recompute
    the scales, and (after the fix) own the one-time amax initialisation flag."""
    for child in model.modules():
        if not isinstance(child, Float8LinearDelayed):
            continue
        if not child.is_amax_initialized:
            child.fp8_amax_x.fill_(E4M3_MAX)
            child.is_amax_initialized = True
        child.fp8_amax_history_x.copy_(torch.roll(child.fp8_amax_history_x, 1))
        child.fp8_amax_history_x[0] = child.fp8_amax_x
        child.fp8_scale_x.copy_(E4M3_MAX / torch.clamp(child.fp8_amax_history_x.max(), min=1e-12))
        child.amax_and_scale_synced = True


# --- fairseq2 transformer encoder with LayerDrop, reduced ------------------------------------------------------------
class EncoderLayer(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, seqs: torch.Tensor) -> torch.Tensor:
        return seqs + self.ffn(self.norm(seqs))


# --- torchrec sparse features, reduced ------------------------------------------------------------------------------
class KeyedJaggedTensorLite:
    """`torchrec.KeyedJaggedTensor`: one flat `values` tensor for all keys, `lengths` per key and sample, and a
    lazily computed (and cached) Python list `length_per_key`."""

    def __init__(self, keys: list[str], values: torch.Tensor, lengths: torch.Tensor) -> None:
        self._keys = keys
        self._values = values
        self._lengths = lengths
        self._length_per_key: list[int] | None = None

    def keys(self) -> list[str]:
        return self._keys

    def stride(self) -> int:
        return self._lengths.numel() // len(self._keys)

    def lengths(self) -> torch.Tensor:
        return self._lengths

    def length_per_key(self) -> list[int]:
        if self._length_per_key is None:
            self._length_per_key = self._lengths.view(len(self._keys), -1).sum(1).tolist()
        return self._length_per_key

    def to_dict(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """key -> (values, lengths) of that key's jagged tensor."""
        per_key_values = torch.split(self._values, self.length_per_key())
        per_key_lengths = self._lengths.view(len(self._keys), -1)
        return {k: (v, per_key_lengths[i]) for i, (k, v) in enumerate(zip(self._keys, per_key_values))}


class EmbeddingBagCollectionLite(nn.Module):
    """`torchrec.EmbeddingBagCollection`: one sum-pooled EmbeddingBag per feature, pooled embeddings concatenated."""

    def __init__(self, tables: dict[str, int], dim: int) -> None:
        super().__init__()
        self.embedding_bags = nn.ModuleDict({k: nn.EmbeddingBag(n, dim, mode="sum") for k, n in tables.items()})

    def forward(self, features: KeyedJaggedTensorLite) -> torch.Tensor:
        pooled = []
        for key, (values, lengths) in features.to_dict().items():
            offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)[:-1]])
            pooled.append(self.embedding_bags[key](values, offsets))
        return torch.cat(pooled, dim=1)


def random_kjt(keys: list[str], batch: int, num_embeddings: int, generator: torch.Generator) -> KeyedJaggedTensorLite:
    lengths = torch.randint(1, 4, (len(keys) * batch,), generator=generator)
    values = torch.randint(0, num_embeddings, (int(lengths.sum()),), generator=generator)
    return KeyedJaggedTensorLite(keys, values, lengths)


# --- OpenNMT-py style token batching, reduced -----------------------------------------------------------------------
def token_batches(
    examples: list[torch.Tensor], batch_tokens: int, pad: int, pad_to: int | None = None
) -> Iterator[torch.Tensor]:
    """Group examples until the padded batch would exceed `batch_tokens`, pad to the longest example (or, when
    `pad_to` is set, to that fixed length) and yield [batch, seq] id tensors."""
    bucket: list[torch.Tensor] = []
    for ex in examples:
        longest = pad_to if pad_to is not None else max([len(e) for e in bucket] + [len(ex)])
        if bucket and longest * (len(bucket) + 1) > batch_tokens:
            yield _pad(bucket, pad, pad_to)
            bucket = []
        bucket.append(ex)
    if bucket:
        yield _pad(bucket, pad, pad_to)


def _pad(bucket: list[torch.Tensor], pad: int, pad_to: int | None) -> torch.Tensor:
    width = pad_to if pad_to is not None else max(len(e) for e in bucket)
    out = torch.full((len(bucket), width), pad, dtype=torch.long)
    for row, ex in enumerate(bucket):
        out[row, : len(ex)] = ex
    return out
