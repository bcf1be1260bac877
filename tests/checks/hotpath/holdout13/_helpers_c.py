"""Library-style stand-ins for author C's cases (holdout13): a serving engine's forward context, a logger with
`warning_once`, sliding-window mask factories and a layer-wise NVTX hook tracker."""

from __future__ import annotations

import contextlib
import functools
import io
import logging
from dataclasses import dataclass
from typing import Callable, Iterator

import torch

# --------------------------------------------------------------------------- forward context (vLLM-style)


@dataclass
class AttentionMetadata:
    num_prefills: int
    num_decode_tokens: int
    enable_kv_scales_calculation: bool


@dataclass
class ForwardContext:
    attn_metadata: AttentionMetadata | None
    virtual_engine: int = 0


_forward_context: ForwardContext | None = None


def get_forward_context() -> ForwardContext:
    assert _forward_context is not None, "forward context is not set"
    return _forward_context


@contextlib.contextmanager
def set_forward_context(attn_metadata: AttentionMetadata | None, virtual_engine: int = 0) -> Iterator[None]:
    global _forward_context
    prev = _forward_context
    _forward_context = ForwardContext(attn_metadata=attn_metadata, virtual_engine=virtual_engine)
    try:
        yield
    finally:
        _forward_context = prev


# --------------------------------------------------------------------------- logging (SGLang-style)

logger = logging.getLogger("sglang.srt.layers.attention")
logger.addHandler(logging.NullHandler())
logger.propagate = False


@functools.lru_cache(None)
def _warn_once(msg: str) -> None:
    logger.warning(msg)


def print_warning_once(msg: str) -> None:
    _warn_once(msg)


# --------------------------------------------------------------------------- flex-attention mask mods (vLLM-style)


def causal_mask_mod(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
    return q_idx >= kv_idx


def get_sliding_window_mask_mod(window: int) -> Callable[..., torch.Tensor]:
    def sliding_window_mask_mod(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    return sliding_window_mask_mod


def dense_mask_from_mod(mask_mod: Callable[..., torch.Tensor], q_len: int, kv_len: int) -> torch.Tensor:
    q_idx = torch.arange(q_len).unsqueeze(-1)
    kv_idx = torch.arange(kv_len).unsqueeze(0)
    return mask_mod(None, None, q_idx, kv_idx)


# --------------------------------------------------------------------------- layer-wise NVTX markers (SGLang-style)


class _NvtxShim:
    """Stands for `torch.cuda.nvtx` on this CPU-only build: range markers go to the profiler's marker stream."""

    def __init__(self) -> None:
        self._stream = io.StringIO()

    def range_push(self, msg: str) -> None:
        self._stream.write(msg + "\n")

    def range_pop(self) -> None:
        self._stream.write(")\n")


nvtx = _NvtxShim()


class PytHooks:
    """Registers per-module forward pre/post hooks that emit an NVTX range with the module's name and input shapes."""

    def __init__(self, skip_when_compiling: bool = False) -> None:
        self.skip_when_compiling = skip_when_compiling
        self.module_to_name: dict[int, str] = {}

    def module_fwd_pre_hook(self, module: torch.nn.Module, inputs: tuple) -> None:
        if self.skip_when_compiling and torch.compiler.is_compiling():
            return
        marker_dict = {
            "Module": self.module_to_name.get(id(module), type(module).__name__),
            "Inputs": [list(t.shape) for t in inputs if isinstance(t, torch.Tensor)],
        }
        nvtx.range_push("{}".format(marker_dict))

    def module_fwd_hook(self, module: torch.nn.Module, inputs: tuple, output: object) -> None:
        if self.skip_when_compiling and torch.compiler.is_compiling():
            return
        nvtx.range_pop()

    def register_hooks(self, model: torch.nn.Module, prefix: str = "") -> None:
        for name, module in model.named_modules(prefix=prefix):
            self.module_to_name[id(module)] = name or type(module).__name__
            module.register_forward_pre_hook(self.module_fwd_pre_hook)
            module.register_forward_hook(self.module_fwd_hook)
