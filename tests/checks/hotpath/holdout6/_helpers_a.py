"""Library-style stand-ins used by author A's holdout6 cases (diffusers-like attention processors, a
torchrec/FBGEMM-like table-batched embedding with a fused optimizer, a torchtune-like per-layer compile utility, a
timm-like fast-norm switch)."""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

# --------------------------------------------------------------------------------------------------------------------
# diffusers-like attention with a swappable processor object (models/attention_processor.py)
# --------------------------------------------------------------------------------------------------------------------


class FluxAttnProcessor:
    """Stateless processor object: the attention math lives here, the weights live on the Attention module."""

    def __call__(self, attn: Attention, hidden_states: torch.Tensor) -> torch.Tensor:
        b, n, _ = hidden_states.shape
        q = attn.to_q(hidden_states).view(b, n, attn.heads, -1).transpose(1, 2)
        k = attn.to_k(hidden_states).view(b, n, attn.heads, -1).transpose(1, 2)
        v = attn.to_v(hidden_states).view(b, n, attn.heads, -1).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v)
        return attn.to_out(out.transpose(1, 2).reshape(b, n, -1))


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 2, processor: FluxAttnProcessor | None = None) -> None:
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)
        self.set_processor(processor if processor is not None else FluxAttnProcessor())

    def set_processor(self, processor: FluxAttnProcessor) -> None:
        self.processor = processor

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.processor(self, hidden_states)


def set_attn_processor(model: nn.Module, processor: FluxAttnProcessor | dict[str, FluxAttnProcessor]) -> None:
    """diffusers' ModelMixin.set_attn_processor: one instance for every layer, or a dict keyed by module name."""
    for name, module in model.named_modules():
        if isinstance(module, Attention):
            module.set_processor(processor if not isinstance(processor, dict) else processor[name])


# --------------------------------------------------------------------------------------------------------------------
# FBGEMM / torchrec-like table-batched embedding bag with the optimizer fused into the lookup
# --------------------------------------------------------------------------------------------------------------------


class OptimizerArgs(NamedTuple):
    stochastic_rounding: bool
    eps: float
    learning_rate: float


class SplitTableBatchedEmbeddingBags(nn.Module):
    """The fused-SGD lookup applies `weight -= lr * grad` itself, so the learning rate travels with every lookup."""

    def __init__(self, num_embeddings: int, dim: int, learning_rate: float = 0.01, eps: float = 1e-8) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.randn(num_embeddings, dim) * 0.1)
        self.optimizer_args = OptimizerArgs(stochastic_rounding=False, eps=eps, learning_rate=learning_rate)

    def set_learning_rate(self, lr: float) -> None:
        self.optimizer_args = self.optimizer_args._replace(learning_rate=lr)

    def get_learning_rate(self) -> float:
        return self.optimizer_args.learning_rate

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        pooled = F.embedding_bag(indices, self.weights, offsets, mode="sum")
        # stand-in for the backward-fused update: scale by the step size the kernel would apply
        return pooled * (1.0 - self.optimizer_args.learning_rate * self.optimizer_args.eps)


class SplitTableBatchedEmbeddingBagsTensorLR(nn.Module):
    """The later FBGEMM interface: the learning rate is a 0-dim tensor updated in place."""

    def __init__(self, num_embeddings: int, dim: int, learning_rate: float = 0.01, eps: float = 1e-8) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.randn(num_embeddings, dim) * 0.1)
        self.register_buffer("learning_rate_tensor", torch.tensor(learning_rate), persistent=False)
        self.eps = eps

    def set_learning_rate(self, lr: float) -> None:
        self.learning_rate_tensor.fill_(lr)

    def get_learning_rate(self) -> float:
        return float(self.learning_rate_tensor)

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        pooled = F.embedding_bag(indices, self.weights, offsets, mode="sum")
        return pooled * (1.0 - self.learning_rate_tensor * self.eps)


class WarmupScheduler:
    """torchrec-style warmup policy: linear ramp of the learning rate applied to every fused table."""

    def __init__(self, tables: list[nn.Module], base_lr: float, warmup_steps: int) -> None:
        self.tables, self.base_lr, self.warmup_steps, self.iter = tables, base_lr, warmup_steps, 0

    def step(self) -> None:
        self.iter += 1
        lr = self.base_lr * min(1.0, self.iter / self.warmup_steps)
        for table in self.tables:
            table.set_learning_rate(lr)


# --------------------------------------------------------------------------------------------------------------------
# timm-like fast-norm switch (timm/layers/fast_norm.py): a module-level flag set once at model creation
# --------------------------------------------------------------------------------------------------------------------

_USE_FAST_NORM = False


def set_fast_norm(enable: bool = True) -> None:
    global _USE_FAST_NORM
    _USE_FAST_NORM = enable


def is_fast_norm() -> bool:
    return _USE_FAST_NORM


def fast_layer_norm(
    x: torch.Tensor, normalized_shape: list[int], weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> torch.Tensor:
    # timm runs the norm in the autocast dtype when fast norm is on; on CPU fp32 that is the same math
    dt = torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else x.dtype
    with torch.autocast(device_type="cpu", enabled=False):
        return F.layer_norm(x.to(dt), normalized_shape, weight.to(dt), bias.to(dt), eps)


# --------------------------------------------------------------------------------------------------------------------
# float8_experimental-like Float8Linear with delayed scaling (float8_experimental/float8_linear.py)
# --------------------------------------------------------------------------------------------------------------------

E4M3_MAX_POS = torch.finfo(torch.float8_e4m3fn).max


class Float8Config:
    enable_amax_init = True
    enable_pre_and_post_forward = True


config = Float8Config()


def amax_history_to_scale(amax_history: torch.Tensor) -> torch.Tensor:
    return E4M3_MAX_POS / torch.clamp(amax_history.max(), min=1e-12)


def cast_to_float8_e4m3_emulated(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    x8 = (x * scale).clamp(-E4M3_MAX_POS, E4M3_MAX_POS).to(torch.float8_e4m3fn)
    return x8.to(x.dtype) / scale


class Float8Linear(nn.Linear):
    """Delayed scaling: scales come from an amax history that `sync_float8_amax_and_scale_history` rolls between
    iterations; the first forward lazily initialises the amaxes from the live tensors."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        history_len: int = 4,
        enable_amax_init: bool | None = None,
    ) -> None:
        super().__init__(in_features, out_features, bias)
        enable_amax_init = config.enable_amax_init if enable_amax_init is None else enable_amax_init
        self.register_buffer("fp8_amax_x", torch.tensor([E4M3_MAX_POS]))
        self.register_buffer("fp8_amax_history_x", torch.zeros(history_len))
        self.register_buffer("fp8_scale_x", torch.tensor([1.0]))
        self.register_buffer("fp8_amax_w", torch.tensor([E4M3_MAX_POS]))
        self.register_buffer("fp8_amax_history_w", torch.zeros(history_len))
        self.register_buffer("fp8_scale_w", torch.tensor([1.0]))
        self.is_amax_initialized = not enable_amax_init
        self.amax_and_scale_synced = False
        self.enable_pre_and_post_forward = config.enable_pre_and_post_forward
        self.last_seen_input_dtype: torch.dtype | None = None

    @classmethod
    def from_float(cls, mod: nn.Linear, enable_amax_init: bool | None = None) -> Float8Linear:
        new = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, enable_amax_init=enable_amax_init)
        new.weight = mod.weight
        new.bias = mod.bias
        return new

    def _maybe_init_amax(self, t: torch.Tensor, amax: torch.Tensor, history: torch.Tensor, scale: torch.Tensor) -> None:
        if not self.is_amax_initialized:
            new_amax = t.detach().abs().max()
            amax.fill_(new_amax)
            history[0] = new_amax
            scale.copy_(amax_history_to_scale(history))

    def float8_pre_forward(self, x: torch.Tensor) -> None:
        if not self.enable_pre_and_post_forward:
            return
        if self.is_amax_initialized and not self.amax_and_scale_synced and torch.is_grad_enabled():
            raise AssertionError("amaxes and scales not synced, call `sync_float8_amax_and_scale_history` first")
        self.last_seen_input_dtype = x.dtype

    def float8_post_forward(self) -> None:
        if not self.enable_pre_and_post_forward:
            return
        # calling forward again fails until the user syncs amaxes and scales
        self.is_amax_initialized = True
        self.amax_and_scale_synced = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.float8_pre_forward(x)
        self._maybe_init_amax(x, self.fp8_amax_x, self.fp8_amax_history_x, self.fp8_scale_x)
        self._maybe_init_amax(self.weight, self.fp8_amax_w, self.fp8_amax_history_w, self.fp8_scale_w)
        self.fp8_amax_x.copy_(x.detach().abs().max())
        self.fp8_amax_w.copy_(self.weight.detach().abs().max())
        x8 = cast_to_float8_e4m3_emulated(x, self.fp8_scale_x)
        w8 = cast_to_float8_e4m3_emulated(self.weight, self.fp8_scale_w)
        out = F.linear(x8, w8, self.bias)
        self.float8_post_forward()
        return out


def swap_linear_with_float8_linear(module: nn.Module, enable_amax_init: bool | None = None) -> nn.Module:
    for name, child in module.named_children():
        if isinstance(child, nn.Linear) and not isinstance(child, Float8Linear):
            setattr(module, name, Float8Linear.from_float(child, enable_amax_init=enable_amax_init))
        else:
            swap_linear_with_float8_linear(child, enable_amax_init=enable_amax_init)
    return module


@torch.no_grad()
def sync_float8_amax_and_scale_history(model: nn.Module) -> None:
    """Called by the training loop between iterations (eagerly): roll histories, recompute scales, mark synced."""
    for child in model.modules():
        if isinstance(child, Float8Linear):
            for amax, history, scale in (
                (child.fp8_amax_x, child.fp8_amax_history_x, child.fp8_scale_x),
                (child.fp8_amax_w, child.fp8_amax_history_w, child.fp8_scale_w),
            ):
                history.copy_(torch.roll(history, 1))
                history[0] = amax[0]
                scale.copy_(amax_history_to_scale(history))
            child.amax_and_scale_synced = True


# --------------------------------------------------------------------------------------------------------------------
# transformers-like static sliding-window cache layer (cache_utils.StaticSlidingWindowLayer)
# --------------------------------------------------------------------------------------------------------------------


class StaticSlidingWindowLayer:
    """Fixed-size key/value buffers; `cumulative_length` counts every token ever written (a Python int)."""

    def __init__(self, max_cache_len: int, num_heads: int, head_dim: int, batch_size: int = 1) -> None:
        self.max_cache_len = max_cache_len
        self.keys = torch.zeros(batch_size, num_heads, max_cache_len, head_dim)
        self.values = torch.zeros(batch_size, num_heads, max_cache_len, head_dim)
        self.cumulative_length = 0

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        new = key_states.shape[-2]
        is_full = self.cumulative_length >= self.max_cache_len
        if not is_full and self.cumulative_length + new <= self.max_cache_len:
            start = self.cumulative_length
            self.keys[:, :, start : start + new] = key_states
            self.values[:, :, start : start + new] = value_states
        else:  # roll the window left and write at the end
            self.keys.copy_(torch.roll(self.keys, -new, dims=-2))
            self.values.copy_(torch.roll(self.values, -new, dims=-2))
            self.keys[:, :, -new:] = key_states
            self.values[:, :, -new:] = value_states
        self.cumulative_length += new
        return self.keys, self.values

    def get_mask_sizes(self) -> tuple[int, int]:
        kv_length = min(self.cumulative_length, self.max_cache_len)
        kv_offset = max(self.cumulative_length - self.max_cache_len, 0)
        return kv_length, kv_offset


class SlidingWindowCache:
    def __init__(self, num_layers: int, max_cache_len: int, num_heads: int, head_dim: int) -> None:
        self.layers = [StaticSlidingWindowLayer(max_cache_len, num_heads, head_dim) for _ in range(num_layers)]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int):
        return self.layers[layer_idx].update(key_states, value_states)

    def get_mask_sizes(self, layer_idx: int) -> tuple[int, int]:
        return self.layers[layer_idx].get_mask_sizes()
