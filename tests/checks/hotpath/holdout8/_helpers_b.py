"""Stand-ins for library code used by author B's cases (transformers caches and generation utilities, fairseq2
incremental state, speechbrain batching, MONAI MetaTensor, PEFT LoRA layers). Kept in their own module so that the
cases reach them through the same indirection as the real libraries."""
from __future__ import annotations

import functools
import logging
from typing import Any

import torch
from torch import nn


# --- transformers-style DynamicCache -------------------------------------------------------------------------------
class DynamicCache:
    """Per-layer lists of key/value tensors that grow along the sequence dim with every decoding step."""

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []
        self.value_cache: list[torch.Tensor] = []

    def get_seq_length(self, layer_idx: int = 0) -> int:
        if len(self.key_cache) <= layer_idx:
            return 0
        return self.key_cache[layer_idx].shape[-2]

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key)
            self.value_cache.append(value)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]


class StaticCache:
    """Preallocated key/value buffers written at `cache_position` (a tensor), so shapes never change."""

    def __init__(self, max_cache_len: int, dim: int) -> None:
        self.key_cache = [torch.zeros(1, max_cache_len, dim)]
        self.value_cache = [torch.zeros(1, max_cache_len, dim)]

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, cache_position: torch.Tensor):
        k_out, v_out = self.key_cache[layer_idx], self.value_cache[layer_idx]
        k_out.index_copy_(1, cache_position, key)
        v_out.index_copy_(1, cache_position, value)
        return k_out, v_out


# --- transformers-style logging ---------------------------------------------------------------------------------------
@functools.lru_cache(None)
def warning_once(self: logging.Logger, *args: Any, **kwargs: Any) -> None:
    """transformers.utils.logging.warning_once: `logger.warning`, emitted once per distinct message."""
    self.warning(*args, **kwargs)


logging.Logger.warning_once = warning_once
modeling_logger = logging.getLogger("transformers.models.gemma3.modeling_gemma3")
modeling_logger.addHandler(logging.NullHandler())


# --- fairseq2-style incremental state bag ----------------------------------------------------------------------------
class IncrementalStateBag:
    """Holds the decoding step of an incremental (one token at a time) decoder, as fairseq2's state bag does."""

    def __init__(self, max_num_steps: int) -> None:
        self.step_nr = 0
        self.max_num_steps = max_num_steps

    def increment_step_nr(self, value: int = 1) -> None:
        self.step_nr += value


class TensorStepStateBag:
    """The same bag with the step kept in a 0-d tensor that is advanced in place."""

    def __init__(self, max_num_steps: int) -> None:
        self.step_nr = torch.zeros((), dtype=torch.long)
        self.max_num_steps = max_num_steps

    def increment_step_nr(self, value: int = 1) -> None:
        self.step_nr.add_(value)


# --- speechbrain-style padded batches --------------------------------------------------------------------------------
class PaddedData:
    def __init__(self, data: torch.Tensor, lengths: torch.Tensor) -> None:
        self.data = data
        self.lengths = lengths  # relative lengths in [0, 1], as speechbrain's `wav_lens`


def batch_pad_right(tensors: list[torch.Tensor], pad_to: int | None = None) -> PaddedData:
    """speechbrain.utils.data_utils.batch_pad_right: pad to the longest item (or to `pad_to`), return relative lens."""
    longest = max(t.shape[0] for t in tensors)
    target = longest if pad_to is None else pad_to
    out = torch.zeros(len(tensors), target, tensors[0].shape[-1])
    for j, t in enumerate(tensors):
        out[j, : t.shape[0]] = t
    lens = torch.tensor([t.shape[0] / target for t in tensors])
    return PaddedData(out, lens)


# --- MONAI-style MetaTensor ------------------------------------------------------------------------------------------
class MetaTensor(torch.Tensor):
    """A tensor subclass carrying `meta` (a dict) and `affine`, like monai.data.MetaTensor."""

    @staticmethod
    def __new__(cls, x: torch.Tensor, affine: torch.Tensor | None = None, meta: dict | None = None):
        return torch.Tensor._make_subclass(cls, x, x.requires_grad)

    def __init__(self, x: torch.Tensor, affine: torch.Tensor | None = None, meta: dict | None = None) -> None:
        self.affine = torch.eye(4) if affine is None else affine
        self.meta = dict(meta or {})

    def as_tensor(self) -> torch.Tensor:
        """monai.data.MetaTensor.as_tensor: the data as a plain torch.Tensor, without the metadata."""
        return self.as_subclass(torch.Tensor)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ret = super().__torch_function__(func, types, args, kwargs)
        return ret


# --- PEFT-style LoRA layer -------------------------------------------------------------------------------------------
class LoraLinear(nn.Module):
    def __init__(self, base_layer: nn.Linear, r: int = 2, lora_alpha: float = 2.0, adapter_name: str = "default"):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling: dict[str, Any] = {adapter_name: lora_alpha / r}
        self.active_adapters = [adapter_name]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            scaling = self.scaling[active_adapter]
            result = result + lora_B(lora_A(x)) * scaling
        return result


def hotswap_adapter(model: nn.Module, alpha_by_step: float, adapter_name: str = "default") -> None:
    """peft.utils.hotswap.hotswap_adapter: copy the new adapter's weights in place and take over its scaling."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            with torch.no_grad():
                module.lora_A[adapter_name].weight.mul_(0.5).add_(0.1)
                module.lora_B[adapter_name].weight.mul_(0.5).add_(0.1)
            r = module.lora_A[adapter_name].out_features
            old = module.scaling[adapter_name]
            if isinstance(old, torch.Tensor):
                old.fill_(alpha_by_step / r)
            else:
                module.scaling[adapter_name] = alpha_by_step / r


def convert_scalings_to_tensor(model: nn.Module) -> None:
    """peft.utils.hotswap._convert_scalings_to_tensor: LoRA scalings as tensors, so changing them does not recompile."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            for key, val in module.scaling.items():
                if isinstance(val, float):
                    module.scaling[key] = torch.tensor(val)


# --- accelerate-style model hooks (cpu offload) ----------------------------------------------------------------------


def send_to_device(tensor: Any, device: torch.device | str) -> Any:
    if isinstance(tensor, (list, tuple)):
        return type(tensor)(send_to_device(t, device) for t in tensor)
    if isinstance(tensor, dict):
        return {k: send_to_device(v, device) for k, v in tensor.items()}
    if isinstance(tensor, torch.Tensor):
        return tensor.to(device)
    return tensor


class ModelHook:
    no_grad = False

    def init_hook(self, module: nn.Module) -> nn.Module:
        return module

    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any):
        return args, kwargs

    def post_forward(self, module: nn.Module, output: Any) -> Any:
        return output


class CpuOffload(ModelHook):
    """accelerate.hooks.CpuOffload: move the module to the execution device before forward, offload the previous one."""

    def __init__(self, execution_device: str = "cpu", prev_module_hook: UserCpuOffloadHook | None = None) -> None:
        self.prev_module_hook = prev_module_hook
        self.execution_device = execution_device

    def init_hook(self, module: nn.Module) -> nn.Module:
        return module.to("cpu")

    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any):
        if self.prev_module_hook is not None:
            self.prev_module_hook.offload()
        module.to(self.execution_device)
        return send_to_device(args, self.execution_device), send_to_device(kwargs, self.execution_device)


class UserCpuOffloadHook:
    def __init__(self, model: nn.Module, hook: CpuOffload) -> None:
        self.model = model
        self.hook = hook

    def offload(self) -> None:
        self.hook.init_hook(self.model)


def add_hook_to_module(module: nn.Module, hook: ModelHook) -> nn.Module:
    """accelerate.hooks.add_hook_to_module: rewrite `module.forward` to run the hook around the original forward."""
    old_forward = module.forward
    module._old_forward = old_forward
    module = hook.init_hook(module)
    module._hf_hook = hook

    def new_forward(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = module._hf_hook.pre_forward(module, *args, **kwargs)
        if module._hf_hook.no_grad:
            with torch.no_grad():
                output = module._old_forward(*args, **kwargs)
        else:
            output = module._old_forward(*args, **kwargs)
        return module._hf_hook.post_forward(module, output)

    module.forward = functools.update_wrapper(functools.partial(new_forward, module), old_forward)
    return module


def cpu_offload_with_hook(model: nn.Module, execution_device: str = "cpu", prev_module_hook=None):
    hook = CpuOffload(execution_device=execution_device, prev_module_hook=prev_module_hook)
    add_hook_to_module(model, hook)
    return model, UserCpuOffloadHook(model, hook)


# --- transformers-style flash-attention utilities ----------------------------------------------------------------------
def _is_packed_sequence(position_ids: torch.Tensor | None, batch_size: int) -> torch.Tensor | bool:
    """modeling_flash_attention_utils._is_packed_sequence: position ids that restart mean several packed sequences."""
    if position_ids is None:
        return False
    increasing_position_sequences = torch.arange(position_ids.shape[1], device=position_ids.device) + position_ids.min()
    return batch_size == 1 and (increasing_position_sequences - position_ids).abs().sum().bool()


def _varlen_attention(q, k, v, position_ids):
    """Stand-in for flash_attn_varlen_func: block-diagonal attention over the sequences packed in the row."""
    starts = (position_ids[0] == 0).cumsum(0)
    mask = starts.unsqueeze(0) == starts.unsqueeze(1)
    scores = (q @ k.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def flash_attention_forward(q, k, v, attention_mask=None, position_ids=None):
    """modeling_flash_attention_utils._flash_attention_forward, reduced to its dispatch on mask / packed positions."""
    if attention_mask is not None:
        scores = (q @ k.transpose(-1, -2)).masked_fill(attention_mask[:, None, :] == 0, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
    if _is_packed_sequence(position_ids, batch_size=q.size(0)):
        return _varlen_attention(q, k, v, position_ids)
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


# --- transformers-style static sliding-window cache layer --------------------------------------------------------------
class StaticSlidingWindowLayer:
    """cache_utils.StaticSlidingWindowLayer: a fixed ring of `max_cache_len` slots and a running `cumulative_length`."""

    def __init__(self, max_cache_len: int, dim: int) -> None:
        self.max_cache_len = max_cache_len
        self.keys = torch.zeros(1, max_cache_len, dim)
        self.values = torch.zeros(1, max_cache_len, dim)
        self.cumulative_length = 0

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor):
        is_full = self.cumulative_length >= self.max_cache_len
        self.cumulative_length += key_states.shape[-2]
        if is_full:
            self.keys = torch.cat([self.keys[:, 1:], key_states], dim=1)
            self.values = torch.cat([self.values[:, 1:], value_states], dim=1)
        else:
            pos = self.cumulative_length - 1
            self.keys[:, pos] = key_states[:, 0]
            self.values[:, pos] = value_states[:, 0]
        return self.keys, self.values

    def get_mask_sizes(self) -> tuple[int, int]:
        kv_offset = max(self.cumulative_length - self.max_cache_len, 0)
        kv_length = min(self.cumulative_length, self.max_cache_len)
        return kv_length, kv_offset


class TensorLengthSlidingWindowLayer:
    """The same layer with `cumulative_length` as a 0-d tensor and the mask built from it (no Python int leaves)."""

    def __init__(self, max_cache_len: int, dim: int) -> None:
        self.max_cache_len = max_cache_len
        self.keys = torch.zeros(1, max_cache_len, dim)
        self.values = torch.zeros(1, max_cache_len, dim)
        self.cumulative_length = torch.zeros((), dtype=torch.long)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor):
        slot = self.cumulative_length % self.max_cache_len
        self.keys.index_copy_(1, slot.reshape(1), key_states)
        self.values.index_copy_(1, slot.reshape(1), value_states)
        self.cumulative_length.add_(key_states.shape[-2])
        return self.keys, self.values

    def valid_mask(self) -> torch.Tensor:
        return torch.arange(self.max_cache_len) < self.cumulative_length



# --- diffusers-style GGUF quantized parameters -------------------------------------------------------------------------
class GGUFParameter(nn.Parameter):
    """diffusers.quantizers.gguf.utils.GGUFParameter: packed quantized blocks plus their `quant_type`."""

    def __new__(cls, data: torch.Tensor | None, requires_grad: bool = False, quant_type: int | None = None):
        data = data if data is not None else torch.empty(0)
        self = torch.Tensor._make_subclass(cls, data, requires_grad)
        self.quant_type = quant_type
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        result = super().__torch_function__(func, types, args, kwargs)
        quant_type = None
        for arg in args:
            if isinstance(arg, GGUFParameter):
                quant_type = arg.quant_type
                break
        if isinstance(result, torch.Tensor):
            return cls(result, quant_type=quant_type)
        if isinstance(result, (tuple, list)):
            wrapped = [cls(x, quant_type=quant_type) if isinstance(x, torch.Tensor) else x for x in result]
            return type(result)(wrapped)
        return result


GGML_QUANT_SIZES = {8: (32, 34)}  # Q8_0: 32 values per block, 2-byte fp16 scale + 32 int8


def dequantize_blocks_Q8_0(blocks: torch.Tensor, block_size: int, type_size: int, dtype=None) -> torch.Tensor:
    d, x = blocks.split([2, type_size - 2], dim=-1)
    d = d.view(torch.float16).to(dtype)
    x = x.view(torch.int8)
    return d * x


dequantize_functions = {8: dequantize_blocks_Q8_0}


def dequantize_gguf_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if not hasattr(tensor, "quant_type"):
        return tensor
    quant_type = tensor.quant_type
    dequant_fn = dequantize_functions[quant_type]
    block_size, type_size = GGML_QUANT_SIZES[quant_type]
    tensor = tensor.view(torch.uint8)
    shape = (tensor.shape[0], tensor.shape[1] // type_size * block_size)
    n_blocks = tensor.numel() // type_size
    blocks = tensor.reshape((n_blocks, type_size))
    dequant = dequant_fn(blocks, block_size, type_size, dtype=torch.float32)
    return dequant.reshape(shape)


class GGUFLinear(nn.Linear):
    """diffusers GGUFLinear: dequantize the packed weight on every forward."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, compute_dtype=torch.float32) -> None:
        super().__init__(in_features, out_features, bias)
        self.compute_dtype = compute_dtype

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        weight = dequantize_gguf_tensor(self.weight)
        weight = weight.to(self.compute_dtype)
        bias = self.bias.to(self.compute_dtype) if self.bias is not None else None
        return nn.functional.linear(inputs, weight, bias)


def load_q8_0(module: GGUFLinear) -> None:
    """What `from_single_file(..., quantization_config=GGUFQuantizationConfig(...))` leaves on each Linear."""
    out_features, in_features = module.weight.shape
    block_size, type_size = GGML_QUANT_SIZES[8]
    raw = torch.randint(0, 255, (out_features, in_features // block_size * type_size), dtype=torch.uint8)
    raw.view(out_features, -1, type_size)[:, :, :2] = torch.tensor([0, 36], dtype=torch.uint8)  # fp16 scale 0.5**6
    module.weight = GGUFParameter(raw, quant_type=8)
