"""Library-style stand-ins for author C's cases (holdout7 h41-h59, c21-c29).

Each block mimics the shape of the real library code a case was reduced from: vLLM's paged-attention metadata
and op wrapper, torchrec's metric window buffer, vllm-ascend's triton op module with its logger, aiter's arch
probe, tensordict's `to_module`, bitsandbytes' int8 matmul state, TransformerEngine's `no_torch_dynamo` modules and
an FSDP2-style `fully_shard` with Dynamo-disabled hooks.
"""

from __future__ import annotations

import functools
import logging
import os
import warnings
from collections import deque
from dataclasses import dataclass
from typing import Optional

import torch

# --------------------------------------------------------------------------------------------------------------
# vLLM (CPU / IPEX backend): attention metadata built by the model runner every step, and the paged-attention op
# wrapper that reads `max_decode_seq_len` to size its partitions (vllm/attention/ops/paged_attn.py).
# --------------------------------------------------------------------------------------------------------------

_PARTITION_SIZE = 4


@dataclass
class TorchSDPAMetadata:
    num_prefills: int
    num_decode_tokens: int
    seq_lens_tensor: torch.Tensor
    max_decode_seq_len: int
    block_tables: torch.Tensor


class PagedAttention:
    @staticmethod
    def forward_decode(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                       block_tables: torch.Tensor, seq_lens: torch.Tensor, max_seq_len: int) -> torch.Tensor:
        max_num_partitions = (max_seq_len + _PARTITION_SIZE - 1) // _PARTITION_SIZE
        # the IPEX kernel allocates its scratch from the python int (tmp_out[num_seqs, heads, max_num_partitions])
        tmp_out = torch.zeros(query.shape[0], max_num_partitions, query.shape[-1])
        keys = key_cache[:max_seq_len]
        values = value_cache[:max_seq_len]
        mask = torch.arange(max_seq_len)[None, :] < seq_lens[:, None]
        scores = (query @ keys.t()).masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ values
        return out + tmp_out.sum(1)


@dataclass
class TensorSeqLenMetadata:
    """Same metadata with the workaround from the report: the bound travels as a 0-d tensor, not a python int."""

    num_decode_tokens: int
    seq_lens_tensor: torch.Tensor
    max_decode_seq_len: torch.Tensor
    block_tables: torch.Tensor


# --------------------------------------------------------------------------------------------------------------
# torchrec metrics: RecMetric keeps a WindowBuffer (a deque of per-batch states, trimmed to a window) and
# aggregates it on every update (torchrec/metrics/rec_metric.py).
# --------------------------------------------------------------------------------------------------------------


class WindowBuffer:
    def __init__(self, max_size: int, max_buffer_count: int) -> None:
        self._max_size = max_size
        self._max_buffer_count = max_buffer_count
        self._buffers: deque = deque(maxlen=max_buffer_count)
        self._used_sizes: deque = deque(maxlen=max_buffer_count)
        self._window_used_size = 0

    def aggregate_state(self, window_state: torch.Tensor, curr_state: torch.Tensor, size: int) -> None:
        def remove(state: torch.Tensor) -> None:
            window_state -= self._buffers.popleft()
            self._window_used_size -= self._used_sizes.popleft()

        if len(self._buffers) == self._buffers.maxlen:
            remove(window_state)
        self._buffers.append(curr_state)
        self._used_sizes.append(size)
        window_state += curr_state
        self._window_used_size += size
        while self._window_used_size > self._max_size:
            remove(window_state)

    @property
    def buffers(self) -> deque:
        return self._buffers


class RingWindow:
    """The custom-op style replacement: a fixed-size tensor ring plus a tensor cursor, no Python containers."""

    def __init__(self, slots: int, width: int) -> None:
        self.slots = slots
        self.ring = torch.zeros(slots, width)
        self.cursor = torch.zeros((), dtype=torch.long)

    def aggregate_state(self, window_state: torch.Tensor, curr_state: torch.Tensor) -> None:
        slot = self.cursor % self.slots
        onehot = torch.nn.functional.one_hot(slot, self.slots).to(curr_state.dtype)[:, None]
        window_state.sub_((onehot * self.ring).sum(0)).add_(curr_state)
        self.ring.mul_(1 - onehot).add_(onehot * curr_state)
        self.cursor.add_(1)


# --------------------------------------------------------------------------------------------------------------
# vllm-ascend: triton fused op module with a module-level logger (ops/triton/fla/fused_qkvzba_split_reshape.py)
# --------------------------------------------------------------------------------------------------------------

logger = logging.getLogger("vllm_ascend.ops.triton.fla")


def fused_qkvzba_split_reshape_cat(mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, num_heads: int):
    logger.debug("fused_qkvzba_split_reshape_cat: qkvz %s ba %s heads %d", tuple(mixed_qkvz.shape),
                 tuple(mixed_ba.shape), num_heads)
    q, k, v, z = mixed_qkvz.chunk(4, dim=-1)
    b, a = mixed_ba.chunk(2, dim=-1)
    return torch.cat([q, k, v], dim=-1), z, b, a


def fused_qkvzba_split_reshape_cat_quiet(mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, num_heads: int):
    if not torch.compiler.is_compiling():
        logger.debug("fused_qkvzba_split_reshape_cat: qkvz %s ba %s heads %d", tuple(mixed_qkvz.shape),
                     tuple(mixed_ba.shape), num_heads)
    q, k, v, z = mixed_qkvz.chunk(4, dim=-1)
    b, a = mixed_ba.chunk(2, dim=-1)
    return torch.cat([q, k, v], dim=-1), z, b, a


# --------------------------------------------------------------------------------------------------------------
# aiter: arch_info.get_arch() asks the (triton) runtime driver for the target on first use, lru_cached.
# --------------------------------------------------------------------------------------------------------------


class _ActiveDriver:
    def get_current_target(self) -> str:
        # stands for triton.runtime.driver.active.get_current_target().arch: an opaque runtime query
        return os.uname().machine


driver = _ActiveDriver()


@functools.lru_cache(maxsize=1)
def get_arch() -> str:
    try:
        arch = driver.get_current_target()
    except RuntimeError:
        arch = "unknown"
    return arch


_ARCH = get_arch()


def get_arch_eager() -> str:
    """The fix: the arch is read once at import time and get_arch returns the module constant."""
    return _ARCH


# --------------------------------------------------------------------------------------------------------------
# tensordict: TensorDictBase.to_module swaps a loss module's parameters for the ones in a params tensordict and
# warns (FutureWarning) when a plain tensor replaces a registered nn.Parameter.
# --------------------------------------------------------------------------------------------------------------


def to_module(params: dict, module: torch.nn.Module, preserve_module_state: Optional[bool] = None) -> dict:
    old = {}
    for name, value in params.items():
        prefix, _, leaf = name.rpartition(".")
        owner = module.get_submodule(prefix) if prefix else module
        current = owner._parameters.get(leaf)
        if preserve_module_state is None and isinstance(current, torch.nn.Parameter) and not isinstance(
            value, torch.nn.Parameter
        ):
            warnings.warn(
                "TensorDict.to_module() is replacing an existing nn.Parameter with a non-Parameter tensor. "
                "Pass preserve_module_state=False to keep the current replacement behavior.",
                FutureWarning,
            )
        old[name] = current
        owner._parameters[leaf] = value
    return old


# --------------------------------------------------------------------------------------------------------------
# bitsandbytes LLM.int8(): MatmulLtState carried by Linear8bitLt, vector-wise quantisation with outlier columns
# (bitsandbytes/functional.py int8_vectorwise_quant, autograd/_functions.py MatMul8bitLt).
# --------------------------------------------------------------------------------------------------------------


@dataclass
class MatmulLtState:
    threshold: float = 0.0
    has_fp16_weights: bool = False
    CB: Optional[torch.Tensor] = None
    SCB: Optional[torch.Tensor] = None
    idx: Optional[torch.Tensor] = None


def int8_vectorwise_quant(A: torch.Tensor, threshold: float = 0.0):
    outlier_cols = None
    if threshold > 0.0:
        outliers = A.abs() >= threshold
        # argwhere needs a host/device sync, so it is skipped when there are no outliers
        if outliers.any():
            outlier_cols = torch.argwhere(outliers.any(dim=0)).view(-1)
    row_stats = A.abs().amax(dim=1).clamp_min(1e-6)
    out_row = torch.round(A * (127.0 / row_stats[:, None])).to(torch.int8)
    if outlier_cols is not None:
        out_row[:, outlier_cols] = 0
    return out_row, row_stats, outlier_cols


def matmul_8bit(A: torch.Tensor, state: MatmulLtState, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    CA, SCA, outlier_cols = int8_vectorwise_quant(A, threshold=state.threshold)
    out = (CA.float() @ state.CB.float().t()) * (SCA[:, None] * state.SCB[None, :]) / (127.0 * 127.0)
    if state.threshold > 0.0 and outlier_cols is not None and outlier_cols.numel():
        state.idx = outlier_cols
        weight_outliers = state.CB[:, outlier_cols].float() * state.SCB[:, None] / 127.0
        out = out + A[:, outlier_cols] @ weight_outliers.t()
    if bias is not None:
        out = out + bias
    return out


# --------------------------------------------------------------------------------------------------------------
# TransformerEngine as used by Megatron-core: `no_torch_dynamo()` decorates module forwards so Dynamo skips them
# (transformer_engine/pytorch/jit.py), and TELayerNormColumnParallelLinear wraps te.LayerNormLinear.
# --------------------------------------------------------------------------------------------------------------


def no_torch_dynamo(recursive: bool = True):
    def decorator(fn):
        return torch._dynamo.disable(fn, recursive=recursive)

    return decorator


class LayerNormLinear(torch.nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.layer_norm_weight = torch.nn.Parameter(torch.ones(in_features))
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features) * 0.1)

    @no_torch_dynamo()
    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        ln = torch.nn.functional.layer_norm(inp, inp.shape[-1:], self.layer_norm_weight)
        return ln @ self.weight.t()


class LayerNormLinearNative(torch.nn.Module):
    """The `transformer_impl="local"` twin: same math, no Dynamo-disabling decorator."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.layer_norm_weight = torch.nn.Parameter(torch.ones(in_features))
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features) * 0.1)

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        ln = torch.nn.functional.layer_norm(inp, inp.shape[-1:], self.layer_norm_weight)
        return ln @ self.weight.t()


# --------------------------------------------------------------------------------------------------------------
# FSDP2 stand-in: `fully_shard(module)` registers a forward pre-hook (unshard: all-gather) and a forward hook
# (reshard) on the module; both are wrapped in `torch._dynamo.disable` as in torch/distributed/fsdp/_fully_shard.
# --------------------------------------------------------------------------------------------------------------


class FSDPParamGroup:
    def __init__(self, module: torch.nn.Module) -> None:
        self.module = module
        self.is_sharded = True
        self.unshard_count = 0

    def unshard(self) -> None:
        self.is_sharded = False
        self.unshard_count += 1

    def reshard(self) -> None:
        self.is_sharded = True


def fully_shard(module: torch.nn.Module) -> torch.nn.Module:
    group = FSDPParamGroup(module)

    @torch._dynamo.disable
    def _pre_forward(mod, args, kwargs):
        group.unshard()
        return args, kwargs

    @torch._dynamo.disable
    def _post_forward(mod, args, output):
        group.reshard()
        return output

    module.register_forward_pre_hook(_pre_forward, with_kwargs=True)
    module.register_forward_hook(_post_forward)
    module._fsdp_param_group = group
    return module
