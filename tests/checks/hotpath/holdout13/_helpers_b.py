"""Library stand-ins for author B's cases (holdout13): a Mamba-style cache, an accelerate-style hook system,
a Lightning-style result collection. Each mirrors the shape of the real library code its case reduces."""
from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn


# --- transformers: MambaCache (before huggingface/transformers#31247) -------------------------------------------
class MambaCache:
    """Holds per-layer conv/ssm states and a Python int `seqlen_offset` that generate() advances after every step."""

    def __init__(self, num_layers: int, batch: int, dim: int, conv_kernel: int = 4) -> None:
        self.seqlen_offset = 0
        self.conv_states = {i: torch.zeros(batch, dim, conv_kernel) for i in range(num_layers)}
        self.ssm_states = {i: torch.zeros(batch, dim) for i in range(num_layers)}


def update_model_kwargs_for_generation(model_kwargs: dict[str, Any], input_ids: torch.Tensor) -> dict[str, Any]:
    """GenerationMixin-style bookkeeping run between decoding steps (outside the compiled forward)."""
    cache = model_kwargs.get("cache_params")
    if cache is not None:
        cache.seqlen_offset += input_ids.shape[-1]
    return model_kwargs


# --- accelerate: hooks.add_hook_to_module / AlignDevicesHook ----------------------------------------------------
class ModelHook:
    def init_hook(self, module: nn.Module) -> nn.Module:
        return module

    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs

    def post_forward(self, module: nn.Module, output: Any) -> Any:
        return output


def _compile_disabled(fn):
    """accelerate wraps hook entry points so Dynamo never traces them (huggingface/accelerate#3888)."""
    disabled = torch.compiler.disable(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return disabled(*args, **kwargs)

    return wrapper


def send_to_device(obj: Any, device: torch.device | str) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(send_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: send_to_device(v, device) for k, v in obj.items()}
    return obj


class AlignDevicesHook(ModelHook):
    """Moves inputs to the execution device before forward and (optionally) outputs back after it."""

    def __init__(self, execution_device: str = "cpu", io_same_device: bool = False, offload: bool = False) -> None:
        self.execution_device = execution_device
        self.io_same_device = io_same_device
        self.offload = offload
        self.input_device: Any = None

    @_compile_disabled
    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.io_same_device:
            self.input_device = args[0].device if args else None
        return send_to_device(args, self.execution_device), send_to_device(kwargs, self.execution_device)

    @_compile_disabled
    def post_forward(self, module: nn.Module, output: Any) -> Any:
        if self.io_same_device and self.input_device is not None:
            output = send_to_device(output, self.input_device)
        return output


def add_hook_to_module(module: nn.Module, hook: ModelHook) -> nn.Module:
    """Replace `module.forward` with a wrapper that runs the hook around the original forward (accelerate style)."""
    module = hook.init_hook(module)
    module._hf_hook = hook
    old_forward = module.forward
    module._old_forward = old_forward

    @functools.wraps(old_forward)
    def new_forward(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = module._hf_hook.pre_forward(module, *args, **kwargs)
        output = module._old_forward(*args, **kwargs)
        return module._hf_hook.post_forward(module, output)

    module.forward = new_forward
    return module


# --- Lightning: trainer results collection, LightningModule.log, strategy wrapper ---------------------------------
class _ResultCollection(dict):
    """Lightning's `trainer._results`: stores logged values per hook; its `log` is kept out of Dynamo's reach."""

    @torch.compiler.disable
    def log(self, fx: str, name: str, value: torch.Tensor, on_step: bool = True, on_epoch: bool = False,
            batch_size: int | None = None) -> None:
        key = f"{fx}.{name}"
        entry = self.setdefault(key, {"value": torch.zeros(()), "cumulated_batch_size": 0, "on_step": on_step})
        entry["value"] = value.detach().clone()
        entry["cumulated_batch_size"] += batch_size or 1


class _Trainer:
    def __init__(self) -> None:
        self.training = True
        self.global_step = 0
        self._results = _ResultCollection()


class LightningModuleBase(nn.Module):
    """The slice of `LightningModule` the cases use: a trainer reference, a current hook name and `log()`."""

    def __init__(self) -> None:
        super().__init__()
        self._trainer: _Trainer | None = None
        self._current_fx_name: str | None = None

    @property
    def trainer(self) -> _Trainer:
        assert self._trainer is not None
        return self._trainer

    def log(self, name: str, value: torch.Tensor, prog_bar: bool = False, on_step: bool | None = None,
            on_epoch: bool | None = None, batch_size: int | None = None) -> None:
        if self._trainer is None:
            return
        on_step = True if on_step is None else on_step
        on_epoch = False if on_epoch is None else on_epoch
        self.trainer._results.log(self._current_fx_name, name, value, on_step=on_step, on_epoch=on_epoch,
                                  batch_size=batch_size)


class _LightningModuleWrapperBase(nn.Module):
    """Strategy wrapper (DDP & co.): its forward dispatches to the LightningModule's step method."""

    def __init__(self, forward_module: LightningModuleBase) -> None:
        super().__init__()
        self._forward_module = forward_module

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        trainer = self._forward_module._trainer
        if trainer is not None and trainer.training:
            return self._forward_module.training_step(*inputs, **kwargs)
        return self._forward_module(*inputs, **kwargs)


# --- SageAttention-style dispatcher (sageattention/core.py) --------------------------------------------------------
def get_cuda_arch_versions() -> list[str]:
    """SageAttention picks its kernel from each visible GPU's compute capability."""
    cuda_archs = []
    for i in range(torch.cuda.device_count()):
        major, minor = torch.cuda.get_device_capability(i)
        cuda_archs.append(f"sm{major}{minor}")
    return cuda_archs


def sageattn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, tensor_layout: str = "HND",
             is_causal: bool = False) -> torch.Tensor:
    archs = get_cuda_arch_versions()
    arch = archs[q.device.index or 0] if q.is_cuda and archs else None
    if arch is None:  # no supported GPU: the reference path (CPU in these cases)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    raise NotImplementedError(arch)  # the int8/fp8 CUDA kernels, never reached on CPU


@torch.library.custom_op("holdout13_b::sageattn", mutates_args=())
def sageattn_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, tensor_layout: str = "HND") -> torch.Tensor:
    """The fix: the whole dispatcher behind a custom op, opaque to Dynamo."""
    return sageattn(q, k, v, tensor_layout=tensor_layout).contiguous()


@sageattn_op.register_fake
def _(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, tensor_layout: str = "HND") -> torch.Tensor:
    return torch.empty_like(q)


# --- cache-dit style dual-block cache context (cache_factory/.../cache_context.py) ---------------------------------
@torch.compiler.disable
def are_two_tensors_similar(t1: torch.Tensor, t2: torch.Tensor, *, threshold: float) -> bool:
    mean_diff = (t1 - t2).abs().mean()
    mean_t1 = t1.abs().mean()
    diff = mean_diff / mean_t1
    return diff.item() < threshold


class CacheContext:
    """Holds the residuals of the previous denoising step and decides whether the rest of the blocks can be skipped."""

    def __init__(self, residual_diff_threshold: float = 0.05) -> None:
        self.residual_diff_threshold = residual_diff_threshold
        self.buffers: dict[str, torch.Tensor] = {}

    def get_can_use_cache(self, first_hidden_states_residual: torch.Tensor) -> bool:
        prev = self.buffers.get("first_hidden_states_residual")
        if prev is None:
            return False
        return are_two_tensors_similar(prev, first_hidden_states_residual, threshold=self.residual_diff_threshold)


# --- ComfyUI: model_patcher.LowVramPatch / comfy.ops weight_function --------------------------------------------
def calculate_weight(patches: list[tuple[float, torch.Tensor, torch.Tensor]], weight: torch.Tensor, key: str) -> torch.Tensor:
    """comfy.lora.calculate_weight for plain LoRA patches: W + strength * (up @ down)."""
    for strength, up, down in patches:
        weight = weight + strength * (up @ down)
    return weight


class LowVramPatch:
    """Applied lazily to a weight when it is cast for the forward (lowvram / partially loaded models)."""

    def __init__(self, key: str, patches: dict[str, list]) -> None:
        self.key = key
        self.patches = patches

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        return calculate_weight(self.patches[self.key], weight, self.key)


class CastWeightBiasOp(nn.Linear):
    """comfy.ops.manual_cast.Linear: weights go through `weight_function` before use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.weight_function: list = []
        self.bias_function: list = []

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for f in self.weight_function:
            weight = f(weight)
        bias = self.bias
        for f in self.bias_function:
            bias = f(bias)
        return nn.functional.linear(input, weight, bias)
