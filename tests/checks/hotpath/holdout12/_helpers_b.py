"""Library-style stand-ins used by author B's cases (holdout12): a policy base class with a loss helper, a
padding collator, a varlen packer and small trainer/pipeline objects, each kept in the shape of the real code."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F


# --- physical-ai-studio style policy base: compute_loss returns a loss dict for the training callbacks -----------
class PolicyModel(nn.Module):
    """Base class of the native policies: forward() returns (loss, loss_dict) in training, actions otherwise."""

    def compute_loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
        raise NotImplementedError

    def forward(self, batch: dict[str, torch.Tensor]):
        if self.training:
            return self.compute_loss(batch)
        return self.predict_action_chunk(batch)


def l1_and_kl(actions_hat: torch.Tensor, actions: torch.Tensor, mu: torch.Tensor, log_sigma_x2: torch.Tensor):
    l1 = F.l1_loss(actions_hat, actions)
    kl = (-0.5 * (1 + log_sigma_x2 - mu.pow(2) - log_sigma_x2.exp())).sum(-1).mean()
    return l1, kl


# --- tokenizer-like collator: pads every batch to its own longest sequence (padding="longest") ---------------------
class DataCollatorWithPadding:
    def __init__(self, pad_token_id: int = 0, padding: str | bool = "longest", max_length: int | None = None) -> None:
        self.pad_token_id = pad_token_id
        self.padding = padding
        self.max_length = max_length

    def __call__(self, features: list[list[int]]) -> dict[str, torch.Tensor]:
        if self.padding == "max_length":
            length = self.max_length
        else:
            length = max(len(f) for f in features)
        ids = torch.full((len(features), length), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(features), length), dtype=torch.long)
        for row, f in enumerate(features):
            ids[row, : len(f)] = torch.tensor(f)
            mask[row, : len(f)] = 1
        return {"input_ids": ids, "attention_mask": mask}


# --- xtuner-style packer: concatenates samples and returns cumulative sequence lengths -----------------------------
def pack_sequences(lengths: list[int], dim: int = 8, pad_cu_seqlens_to: int | None = None):
    total = sum(lengths)
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    if pad_cu_seqlens_to is not None:  # repeat the last boundary: empty trailing sequences, fixed tensor length
        cu = cu + [cu[-1]] * (pad_cu_seqlens_to - len(cu))
    return torch.randn(total, dim), torch.tensor(cu, dtype=torch.int32)


# --- ComfyUI-style weight patching: LoRA patches applied lazily per weight through `weight_function` -------------
def calculate_weight(patches, weight: torch.Tensor, key: str, intermediate_dtype=None) -> torch.Tensor:
    """comfy.lora.calculate_weight, reduced to plain LoRA (up @ down * strength)."""
    for strength, (up, down) in patches:
        weight = weight + strength * (up @ down).to(weight.dtype)
    return weight


class LowVramPatch:
    """comfy.model_patcher.LowVramPatch: one per patched weight, holding the weight's state-dict key."""

    def __init__(self, key: str, patches: dict) -> None:
        self.key = key
        self.patches = patches
        self.prepared_patches = None

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        patches = self.prepared_patches if self.prepared_patches is not None else self.patches[self.key]
        return calculate_weight(patches, weight, self.key, intermediate_dtype=weight.dtype)


class CastWeightBiasOp:
    comfy_cast_weights = False
    weight_function: list = []
    bias_function: list = []


class ComfyLinear(nn.Linear, CastWeightBiasOp):
    """comfy.ops.disable_weight_init.Linear: applies any weight_function patches before the matmul."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.weight_function = []
        self.bias_function = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for f in self.weight_function:
            weight = f(weight)
        return F.linear(x, weight, self.bias)


class ModelPatcher:
    """comfy.model_patcher.ModelPatcher, reduced: add LoRA patches, then attach them lazily (lowvram) per weight."""

    def __init__(self, model: nn.Module, prefix: str = "diffusion_model.") -> None:
        self.model = model
        self.prefix = prefix
        self.patches: dict[str, list] = {}

    def add_patches(self, lora: dict, strength: float = 1.0) -> None:
        for key, (up, down) in lora.items():
            self.patches.setdefault(key, []).append((strength, (up, down)))

    def patch_lowvram(self) -> None:
        for name, module in self.model.named_modules():
            key = f"{self.prefix}{name}.weight"
            if isinstance(module, ComfyLinear) and key in self.patches:
                module.weight_function = [LowVramPatch(key, self.patches)]


# --- TabPFN-style attention backend probe ---------------------------------------------------------------------------
def _load_fa3_func():
    """Probe for FlashAttention-3 (fa3_backend._load_fa3_func): import it if installed, else None."""
    try:
        from flash_attn_interface import flash_attn_func  # type: ignore[import-not-found]
    except ImportError:
        return None
    return flash_attn_func


def select_attention_backend() -> str:
    return "fa3" if _load_fa3_func() is not None else "sdpa"


# --- PEFT-style LoRA layer and PeftModel.disable_adapter() ----------------------------------------------------------
from contextlib import contextmanager


class LoraLinear(nn.Module):
    """peft.tuners.lora.Linear, reduced: base layer plus per-adapter A/B and a scaling dict."""

    def __init__(self, base_layer: nn.Linear, adapter_name: str = "default", r: int = 2, lora_alpha: int = 4) -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r, base_layer.out_features, bias=False)})
        nn.init.normal_(self.lora_B[adapter_name].weight, std=0.02)
        self.scaling = {adapter_name: lora_alpha / r}
        self._active_adapter = [adapter_name]
        self._disable_adapters = False
        self.merged_adapters: list[str] = []

    @property
    def disable_adapters(self) -> bool:
        return self._disable_adapters

    @property
    def active_adapters(self) -> list[str]:
        return self._active_adapter

    def enable_adapters(self, enabled: bool) -> None:
        self._disable_adapters = not enabled

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.disable_adapters:
            return self.base_layer(x)
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            result = result + self.lora_B[active_adapter](self.lora_A[active_adapter](x)) * self.scaling[active_adapter]
        return result


def inject_lora(model: nn.Module, target_modules: tuple[str, ...]) -> nn.Module:
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in target_modules and isinstance(child, nn.Linear):
                setattr(module, child_name, LoraLinear(child))
    return model


@contextmanager
def disable_adapter(model: nn.Module):
    """PeftModel.disable_adapter(): flips every LoRA layer off for the duration of the block."""
    layers = [m for m in model.modules() if isinstance(m, LoraLinear)]
    try:
        for layer in layers:
            layer.enable_adapters(False)
        yield
    finally:
        for layer in layers:
            layer.enable_adapters(True)


# --- wandb.watch-style parameter tracker (wandb/integration/torch/wandb_torch.py, reduced) -------------------------
LOGGED: list[dict] = []


def log_track_init(log_freq: int) -> list[int]:
    """[calls since last log, log_freq], as wandb keeps it."""
    return [0, log_freq]


def log_track_update(log_track: list[int]) -> bool:
    log_track[0] += 1
    if log_track[0] < log_track[1]:
        return False
    log_track[0] = 0
    return True


class TorchHistory:
    def _no_finite_values(self, tensor: torch.Tensor) -> bool:
        return tensor.shape == torch.Size([0]) or (~torch.isfinite(tensor)).all().item()

    def log_tensor_stats(self, tensor: torch.Tensor, name: str) -> None:
        flat = tensor.reshape(-1).float()
        if self._no_finite_values(flat):
            return
        tmin, tmax = flat.min().item(), flat.max().item()
        hist = flat.histc(bins=8, min=tmin, max=tmax)
        LOGGED.append({name: (hist, tmin, tmax)})  # wandb.run._log({...}, commit=False)

    def add_log_parameters_hook(self, module: nn.Module, name: str = "", prefix: str = "", log_freq: int = 0) -> None:
        prefix = prefix + name
        log_track = log_track_init(log_freq)

        def parameter_log_hook(module, input_, output, log_track=log_track):
            if not log_track_update(log_track):
                return
            for pname, parameter in module.named_parameters():
                self.log_tensor_stats(parameter.detach(), "parameters/" + prefix + pname)

        module.register_forward_hook(parameter_log_hook)


def watch(model: nn.Module, log: str = "parameters", log_freq: int = 1000) -> TorchHistory:
    """wandb.watch(model, log=..., log_freq=...)."""
    history = TorchHistory()
    if log in ("parameters", "all"):
        history.add_log_parameters_hook(model, prefix="", log_freq=log_freq)
    return history


# --- diffusers-style pipeline progress bar (DiffusionPipeline.progress_bar) -----------------------------------------
class ProgressBarMixin:
    def set_progress_bar_config(self, **kwargs) -> None:
        self._progress_bar_config = kwargs

    def progress_bar(self, iterable=None, total=None):
        from tqdm.auto import tqdm

        config = getattr(self, "_progress_bar_config", {})
        if iterable is not None:
            return tqdm(iterable, **config)
        return tqdm(total=total, **config)


class _NoProgress:
    """What the pipeline hands out when the progress bar is explicitly disabled: no tqdm object at all."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


class ProgressBarSkippableMixin(ProgressBarMixin):
    def progress_bar(self, iterable=None, total=None):
        if getattr(self, "_progress_bar_config", {}).get("disable", False):
            return iterable if iterable is not None else _NoProgress()
        return super().progress_bar(iterable=iterable, total=total)


# --- transformers-style StaticCache and generate() (decode steps go through the compiled call) ---------------------
class StaticCache:
    def __init__(self, num_layers: int, max_batch_size: int, max_cache_len: int, heads: int = 2, head_dim: int = 4) -> None:
        self.max_cache_len = max_cache_len
        shape = (max_batch_size, heads, max_cache_len, head_dim)
        self.key_cache = [torch.zeros(shape) for _ in range(num_layers)]
        self.value_cache = [torch.zeros(shape) for _ in range(num_layers)]

    def update(self, key_states, value_states, layer_idx: int, cache_position: torch.Tensor):
        k_out, v_out = self.key_cache[layer_idx], self.value_cache[layer_idx]
        k_out.index_copy_(2, cache_position, key_states)
        v_out.index_copy_(2, cache_position, value_states)
        return k_out, v_out


class GenerationMixin:
    """generate(), reduced: prefill with the eager forward, then decode token by token with the compiled call."""

    def _get_cache(self, batch_size: int, max_cache_len: int) -> StaticCache:
        return StaticCache(len(self.layers), batch_size, max_cache_len)

    def generate(self, input_ids: torch.Tensor, max_new_tokens: int = 3) -> torch.Tensor:
        batch_size, prompt_len = input_ids.shape
        cache = self._get_cache(batch_size, max_cache_len=prompt_len + max_new_tokens)
        cache_position = torch.arange(prompt_len)
        logits = self.forward(input_ids, cache_position=cache_position, past_key_values=cache)  # prefill: not compiled
        for _ in range(max_new_tokens - 1):
            next_tokens = logits[:, -1:].argmax(-1)
            cache_position = cache_position[-1:] + 1
            logits = self(next_tokens, cache_position=cache_position, past_key_values=cache)  # compiled decode step
            input_ids = torch.cat([input_ids, next_tokens], dim=-1)
        return input_ids
