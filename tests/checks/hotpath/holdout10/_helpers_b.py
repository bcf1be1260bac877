"""Library-style helpers for author B's holdout10 cases (stand-ins for ComfyUI's comfy.lora / comfy.ops / model_patcher
and for a Lightning-style fit loop)."""
from __future__ import annotations

import torch


def calculate_weight(patches, weight, key, intermediate_dtype=torch.float32):
    """comfy.lora.calculate_weight: apply a list of (strength, down, up) LoRA patches to `weight`."""
    for strength, down, up in patches:
        if weight.dim() == 1:
            weight = weight + strength * (up @ down).sum(dim=1)
        else:
            weight = weight + strength * (up @ down).to(intermediate_dtype)
    return weight


class LowVramPatch:
    """comfy.model_patcher.LowVramPatch: looks its patches up by the state-dict key when called from the forward."""

    def __init__(self, key, patches):
        self.key = key
        self.patches = patches

    def __call__(self, weight):
        return calculate_weight(self.patches[self.key], weight, self.key, intermediate_dtype=weight.dtype)


class ResolvedPatch:
    """A patch whose LoRA tensors were resolved when the model was patched: no key lookup at call time."""

    def __init__(self, down, up, strength):
        self.down = down
        self.up = up
        self.strength = strength

    def __call__(self, weight):
        delta = self.up @ self.down
        if weight.dim() == 1:
            delta = delta.sum(dim=1)
        return weight + self.strength * delta


def cast_bias_weight(module):
    """comfy.ops.cast_bias_weight: run the weight_function / bias_function lists attached by the patcher."""
    weight, bias = module.weight, module.bias
    for f in module.weight_function:
        weight = f(weight)
    for f in module.bias_function:
        bias = f(bias)
    return weight, bias


class ValidationScheduler:
    """A trainer's 'val_check_interval': which loop steps end with a validation pass."""

    def __init__(self, every: int) -> None:
        self.every = every

    def should_validate(self, step: int) -> bool:
        return (step + 1) % self.every == 0


class LayerwiseOffloadState:
    """FastVideo-style layer-wise offload manager: keeps only the layers near the one running on the device and
    prefetches the next one. Its methods are host-side orchestration and are kept out of compilation."""

    def __init__(self, num_layers: int) -> None:
        self.num_layers = num_layers
        self.resident: set[int] = set()

    @torch.compiler.disable
    def prefetch(self, layer_idx: int) -> None:
        self.resident.add((layer_idx + 1) % self.num_layers)

    @torch.compiler.disable
    def release(self, layer_idx: int) -> None:
        self.resident.discard(layer_idx - 1)


class LayerwiseOffloadHook:
    """The hook object registered on each transformer layer: its entry points call into the state."""

    def __init__(self, state: LayerwiseOffloadState, layer_idx: int) -> None:
        self.state = state
        self.layer_idx = layer_idx

    def pre_forward(self, module, args):
        self.state.prefetch(self.layer_idx)
        return None

    def post_forward(self, module, args, output):
        self.state.release(self.layer_idx)
        return None


def enable_layerwise_offload(layers) -> LayerwiseOffloadState:
    state = LayerwiseOffloadState(len(layers))
    for idx, layer in enumerate(layers):
        hook = LayerwiseOffloadHook(state, idx)
        layer.register_forward_pre_hook(hook.pre_forward)
        layer.register_forward_hook(hook.post_forward)
    return state


# --- stand-in for transformers.modeling_flash_attention_utils -------------------------------------------------

def is_torchdynamo_compiling() -> bool:
    return torch.compiler.is_compiling()


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q: int, max_seqlen_k: int, causal=True):
    """flash_attn's varlen kernel (CPU stand-in): sequences packed along dim 0, max lengths given as Python ints."""
    out = torch.zeros_like(q)
    positions = torch.arange(q.shape[0], device=q.device)
    seq_id = torch.bucketize(positions, cu_seqlens_q[1:], right=True)
    same = seq_id[:, None] == seq_id[None, :]
    if causal:
        same = same & (positions[:, None] >= positions[None, :])
    scores = (q.transpose(0, 1) @ k.transpose(0, 1).transpose(-1, -2)) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(~same, float("-inf"))
    out = (scores.softmax(-1) @ v.transpose(0, 1)).transpose(0, 1)
    return out


def _get_unpad_data(attention_mask: torch.Tensor):
    seqlens_in_batch = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
    max_seqlen_in_batch = seqlens_in_batch.max().item()
    cu_seqlens = torch.nn.functional.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
    return indices, cu_seqlens, max_seqlen_in_batch


def _is_packed_sequence(position_ids: torch.Tensor | None, batch_size: int) -> bool:
    """Packed sequences (several documents in one row) show up as position ids that restart at 0."""
    if position_ids is None:
        return False
    increasing_position_sequences = torch.arange(position_ids.shape[1], device=position_ids.device) + position_ids.min()
    return batch_size == 1 and bool((increasing_position_sequences - position_ids).abs().sum().bool())


def _flash_attention_forward(query, key, value, attention_mask, position_ids=None, is_causal=True, check_packed=True):
    """query/key/value: (batch, seq, heads, head_dim)."""
    batch_size, seq_len = query.shape[:2]
    if attention_mask is not None:
        indices, cu_seqlens, max_seqlen = _get_unpad_data(attention_mask)
        flat = lambda t: t.reshape(batch_size * seq_len, *t.shape[2:]).index_select(0, indices)  # noqa: E731
        out_unpad = flash_attn_varlen_func(flat(query), flat(key), flat(value), cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, is_causal)
        out = query.new_zeros(batch_size * seq_len, *query.shape[2:])
        out = out.index_copy(0, indices, out_unpad)
        return out.reshape(query.shape)
    if check_packed and _is_packed_sequence(position_ids, batch_size):
        starts = (position_ids[0] == 0).nonzero().flatten()
        cu_seqlens = torch.cat([starts, starts.new_tensor([seq_len])]).to(torch.int32)
        flat = lambda t: t.reshape(seq_len, *t.shape[2:])  # noqa: E731
        out = flash_attn_varlen_func(flat(query), flat(key), flat(value), cu_seqlens, cu_seqlens, seq_len, seq_len, is_causal)
        return out.reshape(query.shape)
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal).transpose(1, 2)


# --- stand-in for lightning.pytorch (LightningModule.log -> _ResultCollection, strategy wrapper) -----------------

class _ResultCollection(dict):
    """Lightning's per-loop store of logged values: host-side bookkeeping, kept out of compilation upstream."""

    @torch.compiler.disable
    def log(self, fx: str, name: str, value, on_step: bool = True, on_epoch: bool = False, prog_bar: bool = False) -> None:
        key = f"{fx}.{name}"
        value = value.detach() if isinstance(value, torch.Tensor) else torch.tensor(value)
        entry = self.setdefault(key, {"value": torch.zeros(()), "cumulated_batch_size": 0, "on_epoch": on_epoch})
        if on_epoch:
            entry["value"] = entry["value"] + value
            entry["cumulated_batch_size"] += 1
        else:
            entry["value"] = value


class LightningModuleBase(torch.nn.Module):
    """The slice of LightningModule that training_step touches: `self.log` routes into the trainer's results."""

    def __init__(self) -> None:
        super().__init__()
        self._results = _ResultCollection()
        self._current_fx_name = "training_step"

    def log(self, name: str, value, prog_bar: bool = False, on_step: bool = True, on_epoch: bool = False) -> None:
        self._results.log(self._current_fx_name, name, value, on_step=on_step, on_epoch=on_epoch, prog_bar=prog_bar)


class _LightningModuleWrapperBase(torch.nn.Module):
    """What the strategy wraps the LightningModule in (DDP/FSDP need an nn.Module whose forward is the step)."""

    def __init__(self, forward_module: LightningModuleBase) -> None:
        super().__init__()
        self._forward_module = forward_module

    def forward(self, *inputs, **kwargs):
        if self._forward_module.training:
            return self._forward_module.training_step(*inputs, **kwargs)
        return self._forward_module.validation_step(*inputs, **kwargs)


# --- stand-in for peft.tuners.lora (LoraLayer with per-adapter scaling dict) and a hotswap helper -------------------

class LoraLinear(torch.nn.Module):
    """peft.tuners.lora.Linear: base layer plus per-adapter lora_A/lora_B and a `scaling` dict (alpha / r)."""

    def __init__(self, base_layer: torch.nn.Linear, adapter_name: str, r: int, lora_alpha: float) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = torch.nn.ModuleDict({adapter_name: torch.nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = torch.nn.ModuleDict({adapter_name: torch.nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling = {adapter_name: lora_alpha / r}
        self.active_adapters = [adapter_name]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            scaling = self.scaling[active_adapter]
            result = result + lora_B(lora_A(x)) * scaling
        return result


def hotswap_adapter_from_state_dict(model: torch.nn.Module, state_dict: dict, adapter_name: str, alphas: dict) -> None:
    """peft.utils.hotswap: copy the new adapter's weights in place and update the scaling of every LoRA layer."""
    for name, module in model.named_modules():
        if isinstance(module, LoraLinear):
            with torch.no_grad():
                module.lora_A[adapter_name].weight.copy_(state_dict[f"{name}.lora_A.weight"])
                module.lora_B[adapter_name].weight.copy_(state_dict[f"{name}.lora_B.weight"])
            r = module.lora_A[adapter_name].out_features
            new_scaling = alphas[name] / r
            if isinstance(module.scaling[adapter_name], torch.Tensor):
                module.scaling[adapter_name].fill_(new_scaling)  # prepared for compiled hotswap: in place
            else:
                module.scaling[adapter_name] = new_scaling


def prepare_model_for_compiled_hotswap(model: torch.nn.Module) -> None:
    """peft.utils.hotswap.prepare_model_for_compiled_hotswap: turn every float scaling into a 0-dim tensor."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            for key, value in module.scaling.items():
                module.scaling[key] = torch.tensor(float(value))


# --- stand-in for transformers.utils.logging (logger with a cached warning_once) -----------------------------------

import functools
import logging


class _HFLogger(logging.Logger):
    @functools.lru_cache(None)
    def warning_once(self, *args, **kwargs):
        self.warning(*args, **kwargs)


def get_logger(name: str) -> logging.Logger:
    previous = logging.getLoggerClass()
    logging.setLoggerClass(_HFLogger)
    try:
        logger = logging.getLogger(name)
    finally:
        logging.setLoggerClass(previous)
    logger.setLevel(logging.ERROR)  # keep test output quiet; the call still happens
    return logger


# --- stand-in for transformer_engine.pytorch.attention (backend selection from NVTE_* env vars) ----------------

import os


def get_attention_backend(qkv_format: str = "bshd") -> tuple[bool, bool, bool]:
    """Which attention backends are allowed: each can be switched off with its NVTE_* environment variable."""
    use_flash_attention = int(os.environ.get("NVTE_FLASH_ATTN", "1")) == 1
    use_fused_attention = int(os.environ.get("NVTE_FUSED_ATTN", "1")) == 1
    use_unfused_attention = int(os.environ.get("NVTE_UNFUSED_ATTN", "1")) == 1
    if qkv_format == "thd":
        use_unfused_attention = False
    return use_flash_attention, use_fused_attention, use_unfused_attention


# --- stand-in for keras.src.backend.torch.nn (dot_product_attention with a flash-attention probe) ----------------

def _can_use_flash_attention(query, key, value, mask=None, is_causal=False, raise_error=False, skip_when_tracing=False):
    """Probe torch's SDPA kernel support; `skip_when_tracing` is the fix (report unavailable while compiling)."""
    if skip_when_tracing and torch.compiler.is_compiling():
        return False
    from torch.backends.cuda import SDPAParams, can_use_flash_attention

    spda_params = SDPAParams(query, key, value, mask, 0.0, is_causal, False)
    return can_use_flash_attention(spda_params, raise_error)


def dot_product_attention(query, key, value, mask=None, is_causal=False, flash_attention=None, skip_when_tracing=False):
    """keras ops.dot_product_attention, torch backend: inputs are (batch, seq, heads, dim)."""
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    if flash_attention is None:
        flash_attention = _can_use_flash_attention(q, k, v, mask, is_causal, skip_when_tracing=skip_when_tracing)
    if flash_attention:
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
    else:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
    return out.transpose(1, 2)
