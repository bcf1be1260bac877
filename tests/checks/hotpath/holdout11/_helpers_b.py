"""Library-style helpers standing in for third-party code used by author B's cases (holdout11 h21-h32, c11-c17).

Each block mirrors the shape of the real library code named in its comment; the case modules import from here.
"""

from __future__ import annotations

import torch
from torch import nn


# --- ComfyUI-WanVideoWrapper style runtime LoRA (nodes "Set LoRAs" / "WanVideo Lora Select") -------------------------


class WanLoraLinear(nn.Linear):
    """A linear layer with unmerged LoRA diffs applied at run time, as the wrapper's custom linear does."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__(in_features, out_features)
        self.lora_diffs: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.lora_strengths: list[float] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        for (up, down), strength in zip(self.lora_diffs, self.lora_strengths):
            out = out + strength * (x @ down.t() @ up.t())
        return out


def set_lora_params(model: nn.Module, lora_sd: dict[str, tuple[torch.Tensor, torch.Tensor]], strengths: list[float]) -> None:
    """Attach (once) the LoRA diffs and (every run) the user's strengths to each patched linear, by module name."""
    for name, module in model.named_modules():
        if isinstance(module, WanLoraLinear) and name in lora_sd:
            if not module.lora_diffs:
                module.lora_diffs = [lora_sd[name]]
            module.lora_strengths = list(strengths)


class WanLoraLinearTensorStrength(nn.Linear):
    """The same linear, but the strengths live in a buffer that the node writes in place."""

    def __init__(self, in_features: int, out_features: int, max_loras: int = 1) -> None:
        super().__init__(in_features, out_features)
        self.lora_diffs: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.register_buffer("lora_strengths", torch.ones(max_loras), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        for k, (up, down) in enumerate(self.lora_diffs):
            out = out + self.lora_strengths[k] * (x @ down.t() @ up.t())
        return out


def set_lora_strengths_inplace(model: nn.Module, lora_sd: dict[str, tuple[torch.Tensor, torch.Tensor]], strengths: list[float]) -> None:
    for name, module in model.named_modules():
        if isinstance(module, WanLoraLinearTensorStrength) and name in lora_sd:
            if not module.lora_diffs:
                module.lora_diffs = [lora_sd[name]]
            module.lora_strengths[: len(strengths)].copy_(torch.tensor(strengths))


# --- ComfyUI style low-VRAM weight patching (comfy/model_patcher.py LowVramPatch, comfy/ops.py cast_bias_weight) ------


def calculate_weight(patches: list[tuple[float, torch.Tensor, torch.Tensor]], weight: torch.Tensor, key: str) -> torch.Tensor:
    """comfy.lora.calculate_weight: add each (strength, up, down) LoRA patch to the weight."""
    for strength, up, down in patches:
        weight = weight + strength * (up @ down)
    return weight


class LowVramPatch:
    """Applies the model patcher's patches for one weight key when the layer casts its weight."""

    def __init__(self, key: str, patches: dict[str, list[tuple[float, torch.Tensor, torch.Tensor]]]) -> None:
        self.key = key
        self.patches = patches

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        return calculate_weight(self.patches[self.key], weight, self.key)


class CastWeightBiasOp:
    comfy_cast_weights = False
    weight_function: list = []
    bias_function: list = []


def cast_bias_weight(s: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    weight = s.weight.to(x.dtype)
    for f in s.weight_function:
        weight = f(weight)
    bias = s.bias.to(x.dtype) if s.bias is not None else None
    for f in s.bias_function:
        bias = f(bias)
    return weight, bias


class ComfyLinear(nn.Linear, CastWeightBiasOp):
    """comfy.ops.disable_weight_init.Linear / manual_cast Linear."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.comfy_cast_weights or len(self.weight_function) > 0 or len(self.bias_function) > 0:
            weight, bias = cast_bias_weight(self, x)
            return torch.nn.functional.linear(x, weight, bias)
        return super().forward(x)


class ModelPatcher:
    """Holds the LoRA patches by weight key and hooks LowVramPatch objects onto the layers it could not fit in VRAM."""

    def __init__(self, model: nn.Module, prefix: str = "diffusion_model.") -> None:
        self.model = model
        self.prefix = prefix
        self.patches: dict[str, list[tuple[float, torch.Tensor, torch.Tensor]]] = {}

    def add_patches(self, lora: dict[str, tuple[torch.Tensor, torch.Tensor]], strength: float) -> None:
        for key, (up, down) in lora.items():
            self.patches.setdefault(key, []).append((strength, up, down))

    def load_lowvram(self) -> None:
        for name, module in self.model.named_modules():
            if isinstance(module, ComfyLinear):
                key = f"{self.prefix}{name}.weight"
                if key in self.patches:
                    module.weight_function = [LowVramPatch(key, self.patches)]


# --- Lightning style logging (LightningModule.log -> trainer._results: _ResultCollection -> _ResultMetric) ------------


class _Metadata:
    def __init__(self, fx: str, name: str, on_step: bool, on_epoch: bool, reduce_fx: str = "mean") -> None:
        self.fx, self.name, self.on_step, self.on_epoch, self.reduce_fx = fx, name, on_step, on_epoch, reduce_fx

    @property
    def is_mean_reduction(self) -> bool:
        return self.reduce_fx == "mean"


class _ResultMetric(nn.Module):
    """A torchmetrics-style Metric accumulating one logged value (lightning.pytorch.trainer.connectors.logger_connector.result)."""

    def __init__(self, meta: _Metadata) -> None:
        super().__init__()
        self.meta = meta
        self._update_count = 0
        self._computed = None
        self._forward_cache: torch.Tensor | None = None
        self.value = torch.tensor(0.0)
        self.cumulated_batch_size = torch.tensor(0)

    def update(self, value: torch.Tensor, batch_size: int) -> None:
        value = value.float()
        if self.meta.on_step:
            self._forward_cache = value.clone()
        if self.meta.on_epoch and self.meta.is_mean_reduction:
            self.value = self.value + value.mean() * batch_size
            self.cumulated_batch_size = self.cumulated_batch_size + batch_size

    def forward(self, value: torch.Tensor, batch_size: int) -> torch.Tensor | None:
        self._update_count += 1
        self._computed = None
        self.update(value, batch_size)
        return self._forward_cache


class _ResultCollection(dict):
    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training
        self.batch: torch.Tensor | None = None

    def log(self, fx: str, name: str, value: torch.Tensor, on_step: bool, on_epoch: bool, batch_size: int | None = None) -> None:
        key = f"{fx}.{name}"
        meta = _Metadata(fx, name, on_step, on_epoch)
        if key not in self:
            self[key] = _ResultMetric(meta)
        if batch_size is None:
            batch_size = 1
            if self.batch is not None and meta.on_epoch and meta.is_mean_reduction:
                batch_size = self.batch.size(0)
        self[key](value, batch_size)


class Trainer:
    def __init__(self) -> None:
        self._results = _ResultCollection(training=True)
        self.training = True


class LightningModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._trainer: Trainer | None = None
        self._current_fx_name: str | None = None

    def log(self, name: str, value: torch.Tensor, on_step: bool | None = None, on_epoch: bool | None = None, batch_size: int | None = None) -> None:
        trainer = self._trainer
        if trainer is None:
            return
        results = trainer._results
        on_step = True if on_step is None else on_step
        on_epoch = False if on_epoch is None else on_epoch
        results.log(self._current_fx_name, name, value, on_step=on_step, on_epoch=on_epoch, batch_size=batch_size)


class _LightningModuleWrapperBase(nn.Module):
    """What the strategy wraps the LightningModule in: its forward dispatches to training_step."""

    def __init__(self, forward_module: LightningModule) -> None:
        super().__init__()
        self._forward_module = forward_module

    def forward(self, *inputs, **kwargs):
        trainer = self._forward_module._trainer
        if trainer is not None and trainer.training:
            return self._forward_module.training_step(*inputs, **kwargs)
        return self._forward_module(*inputs, **kwargs)


# --- torchtune / PEFT style LoRA linear and per-layer compile ---------------------------------------------------------


class LoRALinear(nn.Module):
    """Frozen base weight plus trainable low-rank adapter (torchtune.modules.peft.LoRALinear)."""

    def __init__(self, in_dim: int, out_dim: int, rank: int = 2, alpha: float = 4.0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim) * 0.1, requires_grad=False)
        self.lora_a = nn.Linear(in_dim, rank, bias=False)
        self.lora_b = nn.Linear(rank, out_dim, bias=False)
        self.scaling = alpha / rank
        self.disabled = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.linear(x, self.weight)
        if self.disabled:
            return out
        return out + self.lora_b(self.lora_a(x)) * self.scaling


def set_trainable_params(model: nn.Module) -> None:
    """torchtune.modules.peft.set_trainable_params: only adapter weights train."""
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)


def enable_input_require_grads(model: nn.Module) -> None:
    """transformers PreTrainedModel.enable_input_require_grads: a forward hook on the input embeddings."""

    def make_inputs_require_grads(module, input, output):
        output.requires_grad_(True)

    model.tok_embeddings.register_forward_hook(make_inputs_require_grads)


# --- PEFT style tuner layers and PeftModel.disable_adapter (used by TRL's DPO reference pass) -------------------------


class BaseTunerLayer:
    _disable_adapters = False
    active_adapter = "default"

    @property
    def disable_adapters(self) -> bool:
        return self._disable_adapters

    def enable_adapters(self, enabled: bool) -> None:
        self._disable_adapters = not enabled


class PeftLoraLinear(nn.Module, BaseTunerLayer):
    """peft.tuners.lora.layer.Linear: base layer plus per-adapter lora_A / lora_B / scaling dicts."""

    def __init__(self, base_layer: nn.Linear, r: int = 2, lora_alpha: int = 4) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling = {"default": lora_alpha / r}
        base_layer.weight.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        if self.disable_adapters:
            return result
        for name in [self.active_adapter]:
            result = result + self.lora_B[name](self.lora_A[name](x)) * self.scaling[name]
        return result


class PeftModel(nn.Module):
    def __init__(self, base_model: nn.Module) -> None:
        super().__init__()
        self.base_model = base_model

    def forward(self, *args, **kwargs):
        return self.base_model(*args, **kwargs)

    class _DisableAdapter:
        def __init__(self, model: "PeftModel") -> None:
            self.model = model

        def __enter__(self):
            for module in self.model.modules():
                if isinstance(module, BaseTunerLayer):
                    module.enable_adapters(False)

        def __exit__(self, *exc):
            for module in self.model.modules():
                if isinstance(module, BaseTunerLayer):
                    module.enable_adapters(True)

    def disable_adapter(self) -> "PeftModel._DisableAdapter":
        return PeftModel._DisableAdapter(self)


# --- diffusers style hooks: HookRegistry + First Block Cache (diffusers/hooks/first_block_cache.py) -------------------


class FBCSharedBlockState:
    def __init__(self) -> None:
        self.head_block_output: torch.Tensor | None = None
        self.head_block_residual: torch.Tensor | None = None
        self.tail_block_residuals: torch.Tensor | None = None
        self.should_compute: bool = True

    def reset(self) -> None:
        self.__init__()


class StateManager:
    def __init__(self, state_cls) -> None:
        self._state = state_cls()

    def get_state(self):
        return self._state

    def reset(self) -> None:
        self._state.reset()


class ModelHook:
    def initialize_hook(self, module: nn.Module) -> nn.Module:
        return module


class HookRegistry:
    """Wraps a module's forward with a hook's new_forward, keeping the original reachable."""

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
        original_forward = module.forward
        hook.original_forward = original_forward

        def new_forward(*args, **kwargs):
            return hook.new_forward(module, *args, **kwargs)

        module.forward = new_forward
        self.hooks[name] = hook


class FBCHeadBlockHook(ModelHook):
    def __init__(self, state_manager: StateManager, threshold: float) -> None:
        self.state_manager = state_manager
        self.threshold = threshold

    def new_forward(self, module: nn.Module, hidden_states: torch.Tensor, *args, **kwargs):
        original_hidden_states = hidden_states
        output = self.original_forward(hidden_states, *args, **kwargs)
        hidden_states_residual = output - original_hidden_states
        shared_state = self.state_manager.get_state()
        if shared_state.head_block_residual is None:
            should_compute = True
        else:
            should_compute = self._should_compute_remaining_blocks(hidden_states_residual)
        shared_state.should_compute = should_compute
        if not should_compute:
            return output + shared_state.tail_block_residuals
        shared_state.head_block_residual = hidden_states_residual
        shared_state.head_block_output = output
        return output

    @torch.compiler.disable
    def _should_compute_remaining_blocks(self, hidden_states_residual: torch.Tensor) -> bool:
        prev = self.state_manager.get_state().head_block_residual
        absmean = (hidden_states_residual - prev).abs().mean()
        prev_hidden_states_absmean = prev.abs().mean()
        diff = (absmean / prev_hidden_states_absmean).item()
        return diff > self.threshold


class FBCBlockHook(ModelHook):
    def __init__(self, state_manager: StateManager, is_tail: bool = False) -> None:
        self.state_manager = state_manager
        self.is_tail = is_tail

    def new_forward(self, module: nn.Module, hidden_states: torch.Tensor, *args, **kwargs):
        shared_state = self.state_manager.get_state()
        if not shared_state.should_compute:
            return hidden_states
        output = self.original_forward(hidden_states, *args, **kwargs)
        if self.is_tail:
            shared_state.tail_block_residuals = output - shared_state.head_block_output
        return output


def apply_first_block_cache(transformer: nn.Module, threshold: float) -> StateManager:
    state_manager = StateManager(FBCSharedBlockState)
    blocks = list(transformer.transformer_blocks)
    HookRegistry.check_if_exists_or_initialize(blocks[0]).register_hook(FBCHeadBlockHook(state_manager, threshold), "fbc_head_block_hook")
    for k, block in enumerate(blocks[1:], start=1):
        hook = FBCBlockHook(state_manager, is_tail=k == len(blocks) - 1)
        HookRegistry.check_if_exists_or_initialize(block).register_hook(hook, "fbc_block_hook")
    return state_manager


# --- transformers style StaticCache with the (deprecated) seen_tokens counter --------------------------------------------


class StaticCache:
    """transformers.cache_utils.StaticCache before cache_position: pre-allocated K/V plus a Python `seen_tokens` count."""

    def __init__(self, num_layers: int, max_cache_len: int, batch: int, dim: int) -> None:
        self.max_cache_len = max_cache_len
        self.key_cache = [torch.zeros(batch, max_cache_len, dim) for _ in range(num_layers)]
        self.value_cache = [torch.zeros(batch, max_cache_len, dim) for _ in range(num_layers)]
        self.seen_tokens = 0  # Used in `generate` to keep tally of how many tokens the cache has seen

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, cache_kwargs: dict) -> tuple[torch.Tensor, torch.Tensor]:
        if layer_idx == 0:
            self.seen_tokens += key_states.shape[-2]
        position = cache_kwargs["cache_position"]
        self.key_cache[layer_idx][:, position] = key_states
        self.value_cache[layer_idx][:, position] = value_states
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.seen_tokens
