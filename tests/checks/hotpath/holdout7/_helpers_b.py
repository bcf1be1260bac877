"""Library-style stand-ins for author B's cases (transformers cache classes, a Lightning result collection, a
transformers-style loss registry). They live in their own module, as the real code lives in the library."""

from __future__ import annotations

import functools
import logging as _logging
import re
from collections import defaultdict

import torch
import torch.nn.functional as F


# --- transformers.cache_utils (4.4x-4.5x era) ------------------------------------------------------------------


class Cache:
    """Base class of the key/value caches handed to the model by `generate`."""

    def get_seq_length(self, layer_idx: int = 0) -> int:
        raise NotImplementedError


class DynamicCache(Cache):
    """Grows its per-layer key/value lists as decoding goes on; counts the tokens it has seen."""

    def __init__(self) -> None:
        self.key_cache: list[torch.Tensor] = []
        self.value_cache: list[torch.Tensor] = []
        self._seen_tokens = 0  # Used in `generate` to keep tally of how many tokens the cache has seen

    def __len__(self) -> int:
        return len(self.key_cache)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int):
        # Update the number of seen tokens
        if layer_idx == 0:
            self._seen_tokens += key_states.shape[-2]
        if len(self.key_cache) <= layer_idx:
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states], dim=-2)
            self.value_cache[layer_idx] = torch.cat([self.value_cache[layer_idx], value_states], dim=-2)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        if len(self.key_cache) <= layer_idx:
            return 0
        return self.key_cache[layer_idx].shape[-2]


class StaticCache(Cache):
    """Pre-allocated key/value tensors written at `cache_position` (a tensor), so nothing Python-side changes."""

    def __init__(self, num_layers: int, max_cache_len: int, dim: int) -> None:
        self.key_cache = [torch.zeros(1, max_cache_len, dim) for _ in range(num_layers)]
        self.value_cache = [torch.zeros(1, max_cache_len, dim) for _ in range(num_layers)]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, cache_position: torch.Tensor):
        k_out, v_out = self.key_cache[layer_idx], self.value_cache[layer_idx]
        k_out.index_copy_(1, cache_position, key_states)
        v_out.index_copy_(1, cache_position, value_states)
        return k_out, v_out

    def reset(self) -> None:
        for k, v in zip(self.key_cache, self.value_cache):
            k.zero_()
            v.zero_()


class EncoderDecoderCache(Cache):
    """Whisper's pair of caches: self-attention grows every step, cross-attention is filled once per utterance.

    `is_updated[layer_idx]` records whether the cross-attention k/v of that layer were already computed.
    """

    def __init__(self, self_attention_cache: Cache, cross_attention_cache: Cache) -> None:
        self.self_attention_cache = self_attention_cache
        self.cross_attention_cache = cross_attention_cache
        self.is_updated: dict[int, bool] = {}
        for layer_idx in range(len(getattr(cross_attention_cache, "key_cache", []))):
            self.is_updated[layer_idx] = False

    def reset(self) -> None:
        if hasattr(self.self_attention_cache, "reset"):
            self.self_attention_cache.reset()
        for layer_idx in self.is_updated:
            self.is_updated[layer_idx] = False


# --- transformers.loss.loss_utils + modeling_utils.PreTrainedModel.loss_function ----------------------------------


def ForCausalLMLoss(logits: torch.Tensor, labels: torch.Tensor, vocab_size: int, **kwargs) -> torch.Tensor:
    shift_logits = logits[..., :-1, :].contiguous().view(-1, vocab_size)
    shift_labels = labels[..., 1:].contiguous().view(-1)
    return F.cross_entropy(shift_logits, shift_labels, ignore_index=-100)


def ForSequenceClassificationLoss(logits: torch.Tensor, labels: torch.Tensor, vocab_size: int, **kwargs) -> torch.Tensor:
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


LOSS_MAPPING = {
    "ForCausalLM": ForCausalLMLoss,
    "ForSequenceClassification": ForSequenceClassificationLoss,
}


class LossMixin:
    """`PreTrainedModel.loss_function` as introduced by the new loss API: resolves the loss from the class name."""

    config: object

    @property
    def loss_function(self):
        if getattr(self.config, "loss_type", None) is not None:
            loss_type = self.config.loss_type
        else:
            loss_type = self.__class__.__name__
            if loss_type not in LOSS_MAPPING:
                loss_groups = f"({'|'.join(LOSS_MAPPING)})"
                loss_type = re.findall(loss_groups, self.__class__.__name__)
                if len(loss_type) > 0:
                    loss_type = loss_type[0]
                else:
                    loss_type = None
        if loss_type is None or loss_type not in LOSS_MAPPING and getattr(self.config, "loss_type", None) is not None:
            loss_type = "ForCausalLM"
        return LOSS_MAPPING[loss_type]


def resolve_loss_type(cls_name: str) -> str:
    """What a config-time resolution does once, eagerly (same regex, outside the model's forward)."""
    if cls_name in LOSS_MAPPING:
        return cls_name
    found = re.findall(f"({'|'.join(LOSS_MAPPING)})", cls_name)
    return found[0] if found else "ForCausalLM"


# --- lightning.pytorch.trainer.connectors.logger_connector.result ------------------------------------------------


class _ResultMetric:
    """One logged key: a running (sum, count) so that `on_epoch=True` can average over the epoch."""

    def __init__(self, name: str, on_epoch: bool) -> None:
        self.name = name
        self.on_epoch = on_epoch
        self.value = torch.tensor(0.0)
        self.cumulated_batch_size = 0

    def update(self, value: torch.Tensor, batch_size: int) -> None:
        self.value = self.value + value.detach().float() * batch_size
        self.cumulated_batch_size += batch_size

    def compute(self) -> torch.Tensor:
        return self.value / max(self.cumulated_batch_size, 1)


class _ResultCollection(dict):
    """Lightning's per-loop store of everything `self.log` received."""

    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training
        self.batch_idx: int | None = None
        self.dataloader_idx: int | None = None

    def log(self, fx: str, name: str, value: torch.Tensor, on_epoch: bool = True, batch_size: int = 1) -> None:
        key = f"{fx}.{name}"
        if key not in self:
            self[key] = _ResultMetric(name, on_epoch)
        self[key].update(value, batch_size)

    def epoch_end(self) -> dict[str, torch.Tensor]:
        return {metric.name: metric.compute() for metric in self.values()}


class _Trainer:
    """The slice of `Trainer` the LightningModule reaches through `self.trainer`."""

    def __init__(self) -> None:
        self._results = _ResultCollection(training=False)
        self.current_epoch = 0
        self.global_step = 0
        self.callback_metrics: dict[str, torch.Tensor] = defaultdict(lambda: torch.tensor(0.0))


# --- transformers.modeling_attn_mask_utils -------------------------------------------------------------------------


def is_torchdynamo_compiling() -> bool:
    """transformers.utils.is_torchdynamo_compiling."""
    try:
        return torch.compiler.is_compiling()
    except Exception:
        return False


class AttentionMaskConverter:
    @staticmethod
    def _ignore_causal_mask_sdpa(attention_mask, inputs_embeds, past_key_values_length, sliding_window=None) -> bool:
        """Detects whether the causal mask can be dropped so SDPA may dispatch to `is_causal=True` (flash path)."""
        _, query_length = inputs_embeds.shape[0], inputs_embeds.shape[1]
        key_value_length = query_length + past_key_values_length
        ignore_causal_mask = False
        if attention_mask is None:
            ignore_causal_mask = query_length == 1 or key_value_length == query_length
        elif sliding_window is None or key_value_length < sliding_window:
            if len(attention_mask.shape) == 4:
                return False
            elif torch.all(attention_mask == 1):
                if query_length == 1 or key_value_length == query_length:
                    ignore_causal_mask = True
        return ignore_causal_mask

    @staticmethod
    def _ignore_causal_mask_sdpa_tracing_safe(attention_mask, inputs_embeds, past_key_values_length, sliding_window=None) -> bool:
        """The later version: while compiling it never reads the mask's values (the mask is always materialized)."""
        _, query_length = inputs_embeds.shape[0], inputs_embeds.shape[1]
        key_value_length = query_length + past_key_values_length
        is_tracing = torch.jit.is_tracing() or isinstance(inputs_embeds, torch.fx.Proxy) or is_torchdynamo_compiling()
        ignore_causal_mask = False
        if attention_mask is None:
            if is_tracing:
                ignore_causal_mask = False
            else:
                ignore_causal_mask = query_length == 1 or key_value_length == query_length
        elif sliding_window is None or key_value_length < sliding_window:
            if len(attention_mask.shape) == 4:
                return False
            elif not is_tracing and torch.all(attention_mask == 1):
                if query_length == 1 or key_value_length == query_length:
                    ignore_causal_mask = True
        return ignore_causal_mask


# --- accelerate.hooks ------------------------------------------------------------------------------------------------

def clear_device_cache(garbage_collection: bool = False) -> None:
    import gc

    if garbage_collection:
        gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def send_to_device(tensor, device):
    if isinstance(tensor, (list, tuple)):
        return type(tensor)(send_to_device(t, device) for t in tensor)
    if isinstance(tensor, dict):
        return {k: send_to_device(v, device) for k, v in tensor.items()}
    return tensor.to(device) if isinstance(tensor, torch.Tensor) else tensor


class ModelHook:
    no_grad = False

    def init_hook(self, module):
        return module

    def pre_forward(self, module, *args, **kwargs):
        return args, kwargs

    def post_forward(self, module, output):
        return output


class CpuOffload(ModelHook):
    """Offloads a model on the CPU until its forward pass is called; offloads the previous model when it runs."""

    def __init__(self, execution_device=None, prev_module_hook=None) -> None:
        self.prev_module_hook = prev_module_hook
        self.execution_device = execution_device if execution_device is not None else torch.device("cpu")

    def init_hook(self, module):
        return module.to("cpu")

    def pre_forward(self, module, *args, **kwargs):
        if self.prev_module_hook is not None:
            self.prev_module_hook.offload()
            clear_device_cache(garbage_collection=True)
        module.to(self.execution_device)
        return send_to_device(args, self.execution_device), send_to_device(kwargs, self.execution_device)


class UserCpuOffloadHook:
    def __init__(self, model, hook) -> None:
        self.model = model
        self.hook = hook

    def offload(self) -> None:
        self.hook.init_hook(self.model)


def add_hook_to_module(module, hook, append: bool = False):
    old_forward = module.forward
    module._old_forward = old_forward
    module = hook.init_hook(module)
    module._hf_hook = hook

    def new_forward(module, *args, **kwargs):
        args, kwargs = module._hf_hook.pre_forward(module, *args, **kwargs)
        if module._hf_hook.no_grad:
            with torch.no_grad():
                output = module._old_forward(*args, **kwargs)
        else:
            output = module._old_forward(*args, **kwargs)
        return module._hf_hook.post_forward(module, output)

    module.forward = functools.update_wrapper(functools.partial(new_forward, module), old_forward)
    return module


def cpu_offload_with_hook(model, execution_device=None, prev_module_hook=None):
    hook = CpuOffload(execution_device=execution_device, prev_module_hook=prev_module_hook)
    add_hook_to_module(model, hook, append=True)
    user_hook = UserCpuOffloadHook(model, hook)
    return model, user_hook


# --- transformers.utils.logging ------------------------------------------------------------------------------------

class _Logger(_logging.LoggerAdapter):
    """A library logger with transformers' `warning_once` (transformers patches it onto `logging.Logger` itself;
    kept on an adapter here so that importing this module changes nothing for other code in the process)."""

    @functools.lru_cache(None)
    def warning_once(self, *args, **kwargs):
        """Emit the warning only once for the same message."""
        self.warning(*args, **kwargs)


def get_logger(name: str) -> _Logger:
    logger = _logging.getLogger(name)
    logger.addHandler(_logging.NullHandler())
    return _Logger(logger, {})
