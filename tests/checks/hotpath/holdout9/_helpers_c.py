"""Library-style stand-ins for author C's cases (vLLM attention metadata / forward context, a NeMo-style norm)."""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class AttentionMetadata:
    """Per-batch metadata the model runner builds before each forward (vLLM v0 style)."""

    num_prefills: int
    num_prefill_tokens: int
    num_decode_tokens: int
    slot_mapping: torch.Tensor


class ForwardContext:
    """Module-level forward context set by the runner around each model call (vLLM `set_forward_context`)."""

    def __init__(self) -> None:
        self.attn_metadata: AttentionMetadata | None = None
        self.virtual_engine = 0


_forward_context = ForwardContext()


def set_forward_context(attn_metadata: AttentionMetadata, virtual_engine: int = 0) -> None:
    _forward_context.attn_metadata = attn_metadata
    _forward_context.virtual_engine = virtual_engine


def get_forward_context() -> ForwardContext:
    return _forward_context


def build_metadata(num_prefill_tokens: int, num_decode_tokens: int) -> AttentionMetadata:
    total = num_prefill_tokens + num_decode_tokens
    return AttentionMetadata(
        num_prefills=1 if num_prefill_tokens else 0,
        num_prefill_tokens=num_prefill_tokens,
        num_decode_tokens=num_decode_tokens,
        slot_mapping=torch.arange(total),
    )


class _StaticForwardContext:
    """Per-engine registry of layers whose work runs outside the graph, keyed by their prefix (vLLM `static_forward_context`)."""

    def __init__(self) -> None:
        self.no_compile_layers: dict[str, object] = {}


static_forward_context = _StaticForwardContext()


def register_layer(prefix: str, layer: object) -> None:
    if prefix in static_forward_context.no_compile_layers:
        raise ValueError(f"duplicate layer name {prefix}")
    static_forward_context.no_compile_layers[prefix] = layer


def moe_forward(hidden_states: torch.Tensor, router_logits: torch.Tensor, layer_name: str) -> torch.Tensor:
    """Dispatcher the MoE layer calls with its own name; looks the layer up to reach its expert weights."""
    layer = static_forward_context.no_compile_layers[layer_name]
    return layer.forward_impl(hidden_states, router_logits)


# --- TransformerEngine-style FP8 global state (class attributes written by the autocast context) ---
import functools
from contextlib import contextmanager


@functools.lru_cache(maxsize=None)
def check_fp8_support() -> tuple[bool, str]:
    """Device capability probe, cached with lru_cache as the library did."""
    return True, ""


class FP8GlobalStateManager:
    FP8_ENABLED = False
    FP8_RECIPE = None
    FP8_AUTOCAST_DEPTH = 0
    IS_FIRST_FP8_MODULE = False

    @classmethod
    def is_fp8_enabled(cls) -> bool:
        return cls.FP8_ENABLED

    @classmethod
    def fp8_autocast_enter(cls, enabled: bool, recipe: object) -> None:
        if enabled:
            fp8_available, reason = check_fp8_support()
            assert fp8_available, reason
        cls.FP8_ENABLED = enabled
        cls.FP8_RECIPE = recipe
        if cls.FP8_AUTOCAST_DEPTH == 0:
            cls.IS_FIRST_FP8_MODULE = enabled
        cls.FP8_AUTOCAST_DEPTH += 1

    @classmethod
    def fp8_autocast_exit(cls, enabled: bool) -> None:
        cls.FP8_AUTOCAST_DEPTH -= 1
        if cls.FP8_AUTOCAST_DEPTH == 0:
            cls.FP8_ENABLED = False


@contextmanager
def fp8_autocast(enabled: bool = True, fp8_recipe: object = None):
    FP8GlobalStateManager.fp8_autocast_enter(enabled, fp8_recipe)
    try:
        yield
    finally:
        FP8GlobalStateManager.fp8_autocast_exit(enabled)


def reset_fp8_state() -> None:
    FP8GlobalStateManager.FP8_ENABLED = False
    FP8GlobalStateManager.FP8_RECIPE = None
    FP8GlobalStateManager.FP8_AUTOCAST_DEPTH = 0
    FP8GlobalStateManager.IS_FIRST_FP8_MODULE = False


# --- DeepSpeed ZeRO-3 style parameter partitioning driven by module hooks ---
class ZeroParamStatus:
    AVAILABLE = 1
    NOT_AVAILABLE = 2


class PartitionedParameterCoordinator:
    """Gathers a module's partitioned parameters in a pre-forward hook and releases them in a post-forward hook."""

    def __init__(self) -> None:
        self.fetched = 0

    def partition(self, module: torch.nn.Module) -> None:
        for p in module.parameters(recurse=False):
            if not hasattr(p, "ds_tensor"):
                p.ds_tensor = p.data.clone()
                p.ds_shape = p.shape
            p.data = torch.empty(0, dtype=p.dtype)
            p.ds_status = ZeroParamStatus.NOT_AVAILABLE

    def fetch_sub_module(self, module: torch.nn.Module) -> None:
        for p in module.parameters(recurse=False):
            if p.ds_status == ZeroParamStatus.NOT_AVAILABLE:
                p.data = p.ds_tensor.view(p.ds_shape)
                p.ds_status = ZeroParamStatus.AVAILABLE
        self.fetched += 1

    def release_sub_module(self, module: torch.nn.Module) -> None:
        self.partition(module)


def register_zero3_hooks(model: torch.nn.Module, coordinator: PartitionedParameterCoordinator) -> None:
    for m in model.modules():
        if any(True for _ in m.parameters(recurse=False)):
            coordinator.partition(m)
            m.register_forward_pre_hook(lambda mod, args: coordinator.fetch_sub_module(mod))
            m.register_forward_hook(lambda mod, args, out: coordinator.release_sub_module(mod))
