"""Library-style stand-ins shared by author B's hold-out 16 cases (h21-h30, c11-c16).

Each piece mirrors, at toy size, how the named Hugging Face / Ultralytics code is written: a transformers static
KV-cache layer, timm's fast-norm switch and optimizer update helper, and an ultralytics detection head. Nothing here is
imported from those libraries.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# --------------------------------------------------------------------------------------------------------------
# transformers: cache_utils.StaticLayer (lazily allocated on the first update, built for torch.compile)


class StaticLayer:
    """One layer of a static KV cache: [batch, heads, max_cache_len, head_dim] tensors written in place."""

    is_compileable = True

    def __init__(self, max_cache_len: int) -> None:
        self.max_cache_len = max_cache_len
        self.is_initialized = False
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def lazy_initialization(self, key_states: torch.Tensor) -> None:
        batch, heads, _, head_dim = key_states.shape
        shape = (batch, heads, self.max_cache_len, head_dim)
        self.keys = torch.zeros(shape, dtype=key_states.dtype, device=key_states.device)
        self.values = torch.zeros(shape, dtype=key_states.dtype, device=key_states.device)
        self.is_initialized = True

    def early_initialization(self, batch: int, heads: int, head_dim: int, dtype: torch.dtype) -> None:
        """Allocate ahead of time (what export and compile users are told to call before tracing)."""
        self.lazy_initialization(torch.empty(batch, heads, 0, head_dim, dtype=dtype))

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, cache_position: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states)
        assert self.keys is not None and self.values is not None
        self.keys.index_copy_(2, cache_position, key_states)
        self.values.index_copy_(2, cache_position, value_states)
        return self.keys, self.values

    def reset(self) -> None:
        if self.is_initialized:
            assert self.keys is not None and self.values is not None
            self.keys.zero_()
            self.values.zero_()


class StaticCache:
    def __init__(self, num_layers: int, max_cache_len: int) -> None:
        self.layers = [StaticLayer(max_cache_len) for _ in range(num_layers)]

    def update(self, key_states, value_states, layer_idx: int, cache_position):
        return self.layers[layer_idx].update(key_states, value_states, cache_position)

    def early_initialization(self, batch: int, heads: int, head_dim: int, dtype: torch.dtype) -> None:
        for layer in self.layers:
            layer.early_initialization(batch, heads, head_dim, dtype)

    def reset(self) -> None:
        for layer in self.layers:
            layer.reset()


class CachedSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, layer_idx: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.layer_idx = layer_idx
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, cache: StaticCache, cache_position: torch.Tensor, mask: torch.Tensor):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = cache.update(k, v, self.layer_idx, cache_position)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, d))


class TinyCausalLM(nn.Module):
    """Decoder-only LM whose forward takes the cache and `cache_position` like a transformers model."""

    def __init__(self, vocab: int = 16, dim: int = 8, heads: int = 2, layers: int = 2, max_len: int = 16) -> None:
        super().__init__()
        self.max_len = max_len
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(CachedSelfAttention(dim, heads, i) for i in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, cache: StaticCache, cache_position: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        positions = torch.arange(self.max_len, device=input_ids.device)
        mask = positions[None, :] <= cache_position[:, None]  # [t, max_len]
        for layer in self.layers:
            x = x + layer(x, cache, cache_position, mask)
        return self.lm_head(self.norm(x))


# --------------------------------------------------------------------------------------------------------------
# timm: layers/fast_norm.py


_USE_FAST_NORM = False


def is_fast_norm() -> bool:
    return _USE_FAST_NORM


def set_fast_norm(enable: bool = True) -> None:
    global _USE_FAST_NORM
    _USE_FAST_NORM = enable


def get_autocast_dtype(device: str = "cuda") -> torch.dtype:
    return torch.get_autocast_dtype(device)


def fast_layer_norm(x, normalized_shape, weight, bias, eps):
    """Run the norm in the autocast dtype with autocast disabled (timm's low-precision LayerNorm)."""
    if torch.is_autocast_enabled(x.device.type):
        dt = get_autocast_dtype(x.device.type)
        x, weight, bias = x.to(dt), weight.to(dt), bias.to(dt)
    with torch.amp.autocast(device_type=x.device.type, enabled=False):
        return F.layer_norm(x, normalized_shape, weight, bias, eps)


class LayerNorm2d(nn.LayerNorm):
    """timm.layers.LayerNorm2d: channels-first LayerNorm that switches to the fast path when enabled at build."""

    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__(num_channels, eps=eps)
        self.fast_norm = is_fast_norm()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        if self.fast_norm:
            x = fast_layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        else:
            x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=3, padding=1, groups=dim)
        self.norm = LayerNorm2d(dim)
        self.mlp = nn.Sequential(nn.Conv2d(dim, 2 * dim, 1), nn.GELU(), nn.Conv2d(2 * dim, dim, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(self.conv_dw(x)))


class TinyConvNeXt(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 2, num_classes: int = 4) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 2, stride=2), LayerNorm2d(dim))
        self.stages = nn.Sequential(*[ConvNeXtBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stages(self.stem(x)).mean((2, 3)))


# --------------------------------------------------------------------------------------------------------------
# ultralytics: utils/tal.make_anchors and the Detect head's anchor cache


def make_anchors(feats: list[torch.Tensor], strides: list[int], grid_cell_offset: float = 0.5):
    anchor_points, stride_tensor = [], []
    for feat, stride in zip(feats, strides):
        _, _, h, w = feat.shape
        sx = torch.arange(w, dtype=feat.dtype) + grid_cell_offset
        sy = torch.arange(h, dtype=feat.dtype) + grid_cell_offset
        yy, xx = torch.meshgrid(sy, sx, indexing="ij")
        anchor_points.append(torch.stack((xx, yy), -1).view(-1, 2))
        stride_tensor.append(torch.full((h * w, 1), float(stride), dtype=feat.dtype))
    return torch.cat(anchor_points), torch.cat(stride_tensor)


class Detect(nn.Module):
    """YOLO detection head (toy): per-level box/cls convs, decoded against cached anchors at inference."""

    def __init__(self, nc: int = 2, ch: tuple[int, ...] = (8, 8), strides: tuple[int, ...] = (8, 16)) -> None:
        super().__init__()
        self.nc = nc
        self.stride = list(strides)
        self.cv = nn.ModuleList(nn.Conv2d(c, 4 + nc, 1) for c in ch)
        self.dynamic = False
        self.shape: torch.Size | None = None
        self.anchors = torch.empty(0)
        self.strides = torch.empty(0)

    def decode(self, feats: list[torch.Tensor]) -> torch.Tensor:
        x = torch.cat([xi.flatten(2) for xi in feats], 2)  # [b, 4 + nc, anchors]
        box, cls = x.split((4, self.nc), 1)
        lt, rb = box.chunk(2, 1)
        anchors = self.anchors.transpose(0, 1).unsqueeze(0)
        xy = (anchors + (rb - lt) / 2) * self.strides.transpose(0, 1)
        return torch.cat((xy, cls.sigmoid()), 1)


# --------------------------------------------------------------------------------------------------------------
# timm: optim helpers (an Adan-style update run on a flat list of tensors, the piece users compile)


def adan_update(params, grads, exp_avgs, exp_avg_sqs, *, step, lr, beta1, beta2, eps):
    """One bias-corrected moment update; `step` is a Python int or a 0-d tensor, as the optimizer keeps it."""
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v / bias_correction2).sqrt().add_(eps)
        p.sub_(lr * (m / bias_correction1) / denom)


class CompiledUpdate(nn.Module):
    """Holds the optimizer state for `net` and applies one update in `forward` (the region that gets compiled)."""

    def __init__(self, net: nn.Module, lr: float = 1e-2, tensor_step: bool = False) -> None:
        super().__init__()
        self.params = [p for p in net.parameters()]
        self.exp_avgs = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p) for p in self.params]
        self.lr, self.beta1, self.beta2, self.eps = lr, 0.9, 0.999, 1e-8
        self.tensor_step = tensor_step
        self.step_count: int | torch.Tensor = torch.zeros((), dtype=torch.float32) if tensor_step else 0

    @torch.no_grad()
    def forward(self) -> None:
        self.step_count += 1
        grads = [p.grad for p in self.params]
        adan_update(
            self.params, grads, self.exp_avgs, self.exp_avg_sqs,
            step=self.step_count, lr=self.lr, beta1=self.beta1, beta2=self.beta2, eps=self.eps,
        )
