"""Library-style stand-ins shared by author C's cases (h41-h50, c21-c26).

Each piece mirrors, at toy size, the shape of code in an inference or training stack outside PyTorch and Hugging
Face: a vLLM-style forward context and sampling metadata, a FlashInfer-style JIT module registry, a ComfyUI-style
`transformer_options` dict, DeepSpeed ZeRO-3-style parameter gather/release hooks. Nothing here imports the
project's scanner or monitor.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

# --------------------------------------------------------------------------------------------------------------
# vLLM-style forward context: the model runner sets it before each forward, attention layers read it.


@dataclass
class AttnMetadata:
    """Per-batch attention metadata (tensors only, as the model runner builds it)."""

    seq_lens: torch.Tensor
    slot_scale: torch.Tensor


@dataclass
class ForwardContext:
    # vLLM keeps one metadata entry per attention layer, keyed by the layer's prefix string.
    attn_metadata: dict[str, AttnMetadata] = field(default_factory=dict)
    # a single metadata object shared by every layer of one KV-cache group
    shared_metadata: AttnMetadata | None = None


_forward_context: ForwardContext | None = None


def set_forward_context(ctx: ForwardContext) -> None:
    global _forward_context
    _forward_context = ctx


def get_forward_context() -> ForwardContext:
    assert _forward_context is not None, "forward context is not set"
    return _forward_context


# --------------------------------------------------------------------------------------------------------------
# vLLM-style sampling metadata handed to the sampler every decode step.


@dataclass
class SamplingMetadata:
    temperature: torch.Tensor
    all_greedy: bool = False
    top_k: int | None = None
    # generated token ids so far, one Python list per request (what the penalties read)
    output_token_ids: list[list[int]] = field(default_factory=list)
    # the same ids, padded into a fixed-shape tensor by the model runner (the tensor path)
    output_token_tensor: torch.Tensor | None = None
    repetition_penalty: float = 1.2


def make_padded_token_tensor(token_lists: list[list[int]], width: int, pad: int) -> torch.Tensor:
    """Model-runner side (eager): pad the per-request token lists to a fixed width, keeping the newest ids."""
    rows = []
    for ids in token_lists:
        ids = ids[-width:]
        rows.append(ids + [pad] * (width - len(ids)))
    return torch.tensor(rows, dtype=torch.long)


# --------------------------------------------------------------------------------------------------------------
# FlashInfer-style JIT module registry: an op looks its compiled module up on every call.

_JIT_DIR = Path(tempfile.gettempdir()) / "holdout15_c_flashinfer_jit"


class JitSpec:
    def __init__(self, name: str) -> None:
        self.name = name
        self.aot_path = _JIT_DIR / f"{name}.so"

    @property
    def is_aot(self) -> bool:
        # FlashInfer checks for a prebuilt (AOT) library on disk before deciding how to load the module.
        return self.aot_path.exists()

    def build_and_load(self) -> NormModule:
        return _MODULE_CACHE.setdefault(self.name, NormModule(aot=self.is_aot))


class NormModule:
    """What `gen_norm_module().build_and_load()` returns: an object exposing the kernels."""

    def __init__(self, aot: bool) -> None:
        self.aot = aot

    @staticmethod
    def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


_MODULE_CACHE: dict[str, NormModule] = {}


def gen_norm_module() -> JitSpec:
    return JitSpec("norm")


def get_norm_module() -> NormModule:
    """Looked up on every op call (the reported pattern): spec -> is_aot -> Path.exists -> os.stat."""
    return gen_norm_module().build_and_load()


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return get_norm_module().rmsnorm(x, weight, eps)


# --------------------------------------------------------------------------------------------------------------
# Megatron-style environment switch read by the attention module.


def flash_attn_enabled() -> bool:
    return os.environ.get("NVTE_FLASH_ATTN", "1") == "1"


# --------------------------------------------------------------------------------------------------------------
# DeepSpeed ZeRO-3-style parameter partitioning: the full weight lives in a side store and is gathered into
# `param.data` by a forward pre-hook, then released to an empty tensor by a forward hook.


def partition_param(param: torch.nn.Parameter) -> None:
    param.ds_tensor = param.data.clone()  # type: ignore[attr-defined]
    param.ds_status = "NOT_AVAILABLE"  # type: ignore[attr-defined]
    param.data = torch.empty(0, dtype=param.dtype)


def gather_params(module: torch.nn.Module, args: Any) -> None:
    for p in module.parameters(recurse=False):
        if getattr(p, "ds_status", None) == "NOT_AVAILABLE":
            p.data = p.ds_tensor  # type: ignore[attr-defined]
            p.ds_status = "AVAILABLE"  # type: ignore[attr-defined]


def release_params(module: torch.nn.Module, args: Any, output: Any) -> None:
    for p in module.parameters(recurse=False):
        if getattr(p, "ds_status", None) == "AVAILABLE":
            p.data = torch.empty(0, dtype=p.dtype)
            p.ds_status = "NOT_AVAILABLE"  # type: ignore[attr-defined]
