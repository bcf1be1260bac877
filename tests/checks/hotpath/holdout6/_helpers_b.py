"""Library stand-ins for author B's holdout6 cases: small reductions of PEFT's LoRA layer and adapter switching,
diffusers' hook registry and cache hooks, Lightning's module wrapper and logging, accelerate's module hooks and a
torchmetrics-style metric. Each keeps the shape of the real library code it stands for."""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

# ---------------------------------------------------------------------------------------------------------------
# PEFT: LoraLayer / set_weights_and_activate_adapters / hotswap
# ---------------------------------------------------------------------------------------------------------------


class LoraLinear(nn.Module):
    """peft.tuners.lora.layer.Linear, reduced: base layer + per-adapter A/B + per-adapter `scaling` dict."""

    def __init__(self, base_layer: nn.Linear, adapter_name: str = "default", r: int = 4, lora_alpha: int = 4) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict()
        self.lora_B = nn.ModuleDict()
        self.lora_dropout = nn.ModuleDict()
        self.r: dict[str, int] = {}
        self.lora_alpha: dict[str, int] = {}
        self.scaling: dict[str, Any] = {}
        self._active_adapter: list[str] = [adapter_name]
        self.update_layer(adapter_name, r, lora_alpha)

    def update_layer(self, adapter_name: str, r: int, lora_alpha: int) -> None:
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_A[adapter_name] = nn.Linear(self.base_layer.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.base_layer.out_features, bias=False)
        self.lora_dropout[adapter_name] = nn.Identity()
        self.scaling[adapter_name] = lora_alpha / r

    @property
    def active_adapters(self) -> list[str]:
        return self._active_adapter

    def set_scale(self, adapter: str, scale: float) -> None:
        if adapter not in self.scaling:
            return
        self.scaling[adapter] = scale * self.lora_alpha[adapter] / self.r[adapter]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            result = result + lora_B(lora_A(dropout(x))) * scaling
        return result


def set_weights_and_activate_adapters(model: nn.Module, adapter_names: list[str], weights: list[float]) -> None:
    """peft.tuners.tuners_utils / diffusers `set_adapters`: rescale every LoRA layer for the chosen adapters."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module._active_adapter = list(adapter_names)
            for adapter_name, weight in zip(adapter_names, weights):
                module.set_scale(adapter_name, weight)


def prepare_model_for_compiled_hotswap(model: nn.Module) -> None:
    """peft.utils.hotswap.prepare_model_for_compiled_hotswap, reduced: turn every float scaling into a tensor so a
    later hot-swap can change it in place."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            for adapter_name, scale in module.scaling.items():
                if not isinstance(scale, torch.Tensor):
                    module.scaling[adapter_name] = torch.tensor(scale, dtype=torch.float32)


@torch.no_grad()
def hotswap_adapter_from_state_dict(model: nn.Module, state_dict: dict[str, torch.Tensor], scalings: dict[str, float],
                                    adapter_name: str = "default") -> None:
    """peft.utils.hotswap.hotswap_adapter_from_state_dict, reduced: copy new LoRA weights into the existing
    parameters and `fill_` the (tensor) scaling, so nothing the compiled graph guards on changes identity."""
    for name, module in model.named_modules():
        if not isinstance(module, LoraLinear):
            continue
        module.lora_A[adapter_name].weight.data.copy_(state_dict[f"{name}.lora_A.weight"])
        module.lora_B[adapter_name].weight.data.copy_(state_dict[f"{name}.lora_B.weight"])
        scaling = module.scaling[adapter_name]
        if isinstance(scaling, torch.Tensor):
            scaling.fill_(scalings[name])
        else:
            module.scaling[adapter_name] = scalings[name]


# ---------------------------------------------------------------------------------------------------------------
# Lightning: LightningModule.log (compiler-disabled since Lightning-AI/pytorch-lightning#21837), result collection,
# the strategy's module wrapper that routes forward() to training_step()
# ---------------------------------------------------------------------------------------------------------------


class _ResultCollection(dict):
    """lightning.pytorch.trainer.connectors.logger_connector.result._ResultCollection, reduced."""

    @torch.compiler.disable
    def log(self, fx: str, name: str, value: torch.Tensor, prog_bar: bool = False, on_step: bool = True,
            on_epoch: bool = False, batch_size: int | None = None) -> None:
        key = f"{fx}.{name}"
        entry = self.setdefault(key, {"value": torch.zeros(()), "cumulated_batch_size": 0, "prog_bar": prog_bar})
        entry["value"] = entry["value"] + value.detach() * (batch_size or 1)
        entry["cumulated_batch_size"] += batch_size or 1


class _TrainerState:
    def __init__(self) -> None:
        self.training = True
        self.global_step = 0
        self._results = _ResultCollection()


class LightningModule(nn.Module):
    """lightning.pytorch.LightningModule, reduced to what `self.log` touches."""

    def __init__(self) -> None:
        super().__init__()
        self._trainer: _TrainerState | None = None
        self._current_fx_name: str | None = "training_step"

    @property
    def trainer(self) -> _TrainerState:
        assert self._trainer is not None
        return self._trainer

    @torch.compiler.disable
    def log(self, name: str, value: torch.Tensor, prog_bar: bool = False, logger: bool = True,
            on_step: bool | None = None, on_epoch: bool | None = None, batch_size: int | None = None) -> None:
        results = self.trainer._results
        results.log(self._current_fx_name or "", name, value, prog_bar=prog_bar, on_step=bool(on_step),
                    on_epoch=bool(on_epoch), batch_size=batch_size)


class _LightningModuleWrapperBase(nn.Module):
    """lightning.pytorch.overrides.base._LightningModuleWrapperBase: forward() dispatches to the step method."""

    def __init__(self, forward_module: LightningModule) -> None:
        super().__init__()
        self._forward_module = forward_module

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        trainer = self._forward_module._trainer
        if trainer is not None and trainer.training:
            return self._forward_module.training_step(*inputs, **kwargs)
        return self._forward_module(*inputs, **kwargs)


# ---------------------------------------------------------------------------------------------------------------
# transformers: DynamicCache (the default cache a forward creates when use_cache=True)
# ---------------------------------------------------------------------------------------------------------------


class DynamicCache:
    """transformers.cache_utils.DynamicCache (4.4x), reduced: per-layer lists grown by `update(..., layer_idx)`."""

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []
        self.value_cache: list[torch.Tensor] = []

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int,
               cache_kwargs: dict[str, Any] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]


# ---------------------------------------------------------------------------------------------------------------
# diffusers: hooks (HookRegistry / ModelHook / StateManager) and the TeaCache hook of huggingface/diffusers#12652
# ---------------------------------------------------------------------------------------------------------------


class ModelHook:
    """diffusers.hooks.hooks.ModelHook, reduced."""

    _is_stateful = False

    def initialize_hook(self, module: nn.Module) -> nn.Module:
        return module

    def reset_state(self, module: nn.Module) -> nn.Module:
        return module


class HookRegistry:
    """diffusers.hooks.hooks.HookRegistry, reduced: a hook with `new_forward` replaces `module.forward` with a
    partial bound to the module; the original forward is kept on the hook."""

    def __init__(self, module: nn.Module) -> None:
        self._module_ref = module
        self.hooks: dict[str, ModelHook] = {}

    @classmethod
    def check_if_exists_or_initialize(cls, module: nn.Module) -> "HookRegistry":
        if not hasattr(module, "_diffusers_hook"):
            module._diffusers_hook = cls(module)
        return module._diffusers_hook

    def register_hook(self, hook: ModelHook, name: str) -> None:
        module = self._module_ref
        hook.initialize_hook(module)
        hook.original_forward = module.forward
        new_forward = functools.update_wrapper(functools.partial(hook.new_forward, module), hook.new_forward)
        module.forward = new_forward
        self.hooks[name] = hook

    def reset_stateful_hooks(self) -> None:
        for hook in self.hooks.values():
            if hook._is_stateful:
                hook.reset_state(self._module_ref)


class TeaCacheState:
    def __init__(self) -> None:
        self.cnt = 0
        self.accumulated_rel_l1_distance = 0.0
        self.previous_modulated_input: torch.Tensor | None = None
        self.previous_residual: torch.Tensor | None = None


class StateManager:
    """diffusers.hooks.hooks.StateManager, reduced to one context."""

    def __init__(self, state_cls: type) -> None:
        self._state_cls = state_cls
        self._state: Any = None

    def get_state(self) -> Any:
        if self._state is None:
            self._state = self._state_cls()
        return self._state

    def reset(self) -> None:
        self._state = None


class TeaCacheConfig:
    def __init__(self, rel_l1_thresh: float = 0.2, num_inference_steps: int = 4,
                 coefficients: tuple[float, ...] = (4.98, -28.3, 19.9, -0.18, 0.01)) -> None:
        self.rel_l1_thresh = rel_l1_thresh
        self.num_inference_steps = num_inference_steps
        self.coefficients = coefficients


class TeaCacheHook(ModelHook):
    """The TeaCache hook of huggingface/diffusers#12652, reduced: the skip decision reads `.item()` and so is kept
    out of the graph with `@torch.compiler.disable`."""

    _is_stateful = True

    def __init__(self, config: TeaCacheConfig) -> None:
        self.config = config
        self.state_manager = StateManager(TeaCacheState)
        self.original_forward: Any = None

    def reset_state(self, module: nn.Module) -> nn.Module:
        self.state_manager.reset()
        return module

    @torch.compiler.disable
    def _should_compute(self, state: TeaCacheState, modulated_inp: torch.Tensor) -> bool:
        if state.cnt == 0 or state.cnt == self.config.num_inference_steps - 1 or state.previous_modulated_input is None:
            should_calc = True
            state.accumulated_rel_l1_distance = 0.0
        else:
            prev = state.previous_modulated_input
            rel_l1 = ((modulated_inp - prev).abs().mean() / prev.abs().mean()).item()
            rescaled = sum(c * rel_l1 ** (len(self.config.coefficients) - 1 - k)
                           for k, c in enumerate(self.config.coefficients))
            state.accumulated_rel_l1_distance += rescaled
            should_calc = state.accumulated_rel_l1_distance >= self.config.rel_l1_thresh
            if should_calc:
                state.accumulated_rel_l1_distance = 0.0
        state.previous_modulated_input = modulated_inp.detach()
        state.cnt += 1
        if state.cnt == self.config.num_inference_steps:
            state.cnt = 0
        return should_calc

    def new_forward(self, module: nn.Module, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        state = self.state_manager.get_state()
        modulated_inp = module.transformer_blocks[0].norm1(hidden_states, temb)
        if not self._should_compute(state, modulated_inp):
            return hidden_states + state.previous_residual
        output = self.original_forward(hidden_states, temb)
        state.previous_residual = (output - hidden_states).detach()
        return output


def apply_teacache(module: nn.Module, config: TeaCacheConfig) -> None:
    registry = HookRegistry.check_if_exists_or_initialize(module)
    registry.register_hook(TeaCacheHook(config), "teacache")


# ---------------------------------------------------------------------------------------------------------------
# accelerate: ModelHook / AlignDevicesHook / add_hook_to_module / attach_align_device_hook (dispatch_model path)
# ---------------------------------------------------------------------------------------------------------------


class AccelerateModelHook:
    """accelerate.hooks.ModelHook."""

    no_grad = False

    def init_hook(self, module: nn.Module) -> nn.Module:
        return module

    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs

    def post_forward(self, module: nn.Module, output: Any) -> Any:
        return output


def _send_to_device(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_send_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _send_to_device(v, device) for k, v in obj.items()}
    return obj


class AlignDevicesHook(AccelerateModelHook):
    """accelerate.hooks.AlignDevicesHook, reduced to the non-offloaded path."""

    def __init__(self, execution_device: torch.device | None = None, offload: bool = False,
                 io_same_device: bool = False) -> None:
        self.execution_device = execution_device
        self.offload = offload
        self.io_same_device = io_same_device
        self.input_device: torch.device | None = None

    def pre_forward(self, module: nn.Module, *args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.io_same_device:
            self.input_device = args[0].device
        return _send_to_device(args, self.execution_device), _send_to_device(kwargs, self.execution_device)

    def post_forward(self, module: nn.Module, output: Any) -> Any:
        if self.io_same_device:
            output = _send_to_device(output, self.input_device)
        return output


def add_hook_to_module(module: nn.Module, hook: AccelerateModelHook) -> nn.Module:
    """accelerate.hooks.add_hook_to_module: `module.forward` becomes a per-module `functools.partial`."""
    module = hook.init_hook(module)
    module._hf_hook = hook
    old_forward = module.forward
    module._old_forward = old_forward

    @functools.wraps(old_forward)
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


def attach_align_device_hook(module: nn.Module, execution_device: torch.device,
                             preload_module_classes: list[str] | None = None) -> None:
    """accelerate.hooks.attach_align_device_hook: every module with direct parameters/buffers gets its own hook
    (when nothing is offloaded, `preload_module_classes` does not stop the recursion)."""
    directs = list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False))
    if len(directs) > 0:
        add_hook_to_module(module, AlignDevicesHook(execution_device=execution_device))
    for child in module.children():
        attach_align_device_hook(child, execution_device, preload_module_classes)


# ---------------------------------------------------------------------------------------------------------------
# transformers: logging.warning_once and EncoderDecoderCache (whisper path of huggingface/transformers#35413)
# ---------------------------------------------------------------------------------------------------------------

import logging as _logging  # noqa: E402


@functools.lru_cache(None)
def _warning_once(self: _logging.Logger, *args: Any, **kwargs: Any) -> None:
    """transformers.utils.logging.warning_once: warn once per message."""
    self.warning(*args, **kwargs)


_logging.Logger.warning_once = _warning_once  # type: ignore[attr-defined]


def get_logger(name: str) -> _logging.Logger:
    """transformers.utils.logging.get_logger."""
    return _logging.getLogger(name)


class EncoderDecoderCache:
    """transformers.cache_utils.EncoderDecoderCache, reduced."""

    def __init__(self, self_attention_cache: DynamicCache, cross_attention_cache: DynamicCache) -> None:
        self.self_attention_cache = self_attention_cache
        self.cross_attention_cache = cross_attention_cache

    @classmethod
    def from_legacy_cache(cls, past_key_values: Any = None) -> "EncoderDecoderCache":
        cache = cls(DynamicCache(), DynamicCache())
        if past_key_values is not None:
            for layer_idx, (k, v, ck, cv) in enumerate(past_key_values):
                cache.self_attention_cache.update(k, v, layer_idx)
                cache.cross_attention_cache.update(ck, cv, layer_idx)
        return cache


def set_adapter(model: nn.Module, adapter_name: str) -> None:
    """peft.tuners.lora.model.LoraModel.set_adapter: make `adapter_name` the active adapter of every LoRA layer."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module._active_adapter = [adapter_name]


def add_adapter(model: nn.Module, adapter_name: str, r: int = 4, lora_alpha: int = 8) -> None:
    """peft.PeftModel.add_adapter / load_adapter: inject another LoRA next to the existing ones."""
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.update_layer(adapter_name, r, lora_alpha)
