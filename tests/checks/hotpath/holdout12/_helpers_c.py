"""Stand-ins for library code used by author C's cases (sglang kernels, TensorRT-LLM engine, ...)."""
from __future__ import annotations

import torch
from torch import nn


# --- sglang: a Triton mrope kernel launcher (stand-in computes the same thing in torch ops) -------------------
def mrope_triton_kernel(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    q1, q2 = q.chunk(2, dim=-1)
    k1, k2 = k.chunk(2, dim=-1)
    q = torch.cat([q1 * cos - q2 * sin, q2 * cos + q1 * sin], dim=-1)
    k = torch.cat([k1 * cos - k2 * sin, k2 * cos + k1 * sin], dim=-1)
    return q, k


# --- TensorRT-LLM: the PyTorch-backend engine pads each batch to a captured CUDA-graph batch size --------------
class CudaGraphBatchPadder:
    def __init__(self, cuda_graph_batch_sizes: list[int]) -> None:
        self.cuda_graph_batch_sizes = sorted(cuda_graph_batch_sizes)

    def padded_size(self, num_requests: int) -> int:
        for size in self.cuda_graph_batch_sizes:
            if size >= num_requests:
                return size
        return num_requests

    def pad(self, input_ids: torch.Tensor) -> torch.Tensor:
        target = self.padded_size(input_ids.shape[0])
        if target == input_ids.shape[0]:
            return input_ids
        pad = input_ids.new_zeros((target - input_ids.shape[0], *input_ids.shape[1:]))
        return torch.cat([input_ids, pad], dim=0)


# --- DeepSpeed: deepspeed/utils/nvtx.py and the accelerator's range markers ---------------------------------------
import time as _time

enable_nvtx = True


class _CPUAccelerator:
    """Profiler ranges of the accelerator abstraction (stand-in: timestamps recorded for each pushed range)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[str, int]] = []

    def range_push(self, msg: str) -> None:
        self.ranges.append((msg, _time.perf_counter_ns()))

    def range_pop(self) -> None:
        if self.ranges:
            self.ranges.pop()


_ACCELERATOR = _CPUAccelerator()


def get_accelerator() -> _CPUAccelerator:
    return _ACCELERATOR


def instrument_w_nvtx(func):
    """decorator that causes an NVTX range to be recorded for the duration of the function call."""

    def wrapped_fn(*args, **kwargs):
        if enable_nvtx:
            get_accelerator().range_push(func.__qualname__)
        ret_val = func(*args, **kwargs)
        if enable_nvtx:
            get_accelerator().range_pop()
        return ret_val

    return wrapped_fn


def instrument_w_nvtx_compile_aware(func):
    """The fixed decorator: skips the NVTX range while Dynamo is tracing."""

    def wrapped_fn(*args, **kwargs):
        if enable_nvtx and not torch.compiler.is_compiling():
            get_accelerator().range_push(func.__qualname__)
        ret_val = func(*args, **kwargs)
        if enable_nvtx and not torch.compiler.is_compiling():
            get_accelerator().range_pop()
        return ret_val

    return wrapped_fn


# --- xformers: xformers/components/attention/attention_mask.py ----------------------------------------------------
class AttentionMask:
    """Holds an additive mask (0 where attention is allowed, -inf elsewhere)."""

    def __init__(self, additive_mask: torch.Tensor, is_causal: bool = False) -> None:
        assert additive_mask.is_floating_point(), additive_mask.dtype
        self.values = additive_mask
        self.is_causal = is_causal
        self.seq_len = additive_mask.shape[1]
        self.to_seq_len = additive_mask.shape[0]

    @classmethod
    def from_bool(cls, x: torch.Tensor) -> "AttentionMask":
        assert x.dtype == torch.bool
        additive_mask = torch.empty_like(x, dtype=torch.float)
        additive_mask.masked_fill_(x, 0.0)
        additive_mask.masked_fill_(~x, float("-inf"))
        return cls(additive_mask)

    def to(self, device: torch.device | None = None, dtype: torch.dtype | None = None) -> "AttentionMask":
        assert device is None or isinstance(device, torch.device)
        assert dtype is None or isinstance(dtype, torch.dtype)
        assert device is not None or dtype is not None
        if device is None and self.values.dtype == dtype:
            return self
        return AttentionMask(self.values.to(device=device, dtype=dtype), self.is_causal)


# --- vllm-hpu-extension: vllm_hpu_extension/flags.py (trimmed) --------------------------------------------------
import os as _os
from functools import cache as _cache


class FeatureTest:
    def __init__(self, *required_params):
        self.required_params = set(required_params)

    def __call__(self, **kwargs):
        params = {k: v for k, v in kwargs.items() if k in self.required_params}
        return self.check(**params)

    def __and__(self, rhs):
        return And(self, rhs)

    def check(self, *_, **__):
        raise NotImplementedError


class Not(FeatureTest):
    def __init__(self, child):
        super().__init__(*child.required_params)
        self.child = child

    def check(self, **kwargs):
        return not self.child.check(**kwargs)


class And(FeatureTest):
    def __init__(self, lhs, rhs):
        super().__init__(*lhs.required_params, *rhs.required_params)
        self.lhs = lhs
        self.rhs = rhs

    def check(self, **kwargs):
        return self.lhs(**kwargs) and self.rhs(**kwargs)


class Value(FeatureTest):
    def __init__(self, key, value):
        super().__init__(key)
        self.key = key
        self.value = value

    def check(self, **env):
        return env[self.key] == self.value


class Hardware(Value):
    def __init__(self, target_hw):
        super().__init__("hw", target_hw)


class ModelType(Value):
    def __init__(self, model_type):
        super().__init__("model_type", model_type)


class EnvFlag(FeatureTest):
    def __init__(self, flag, default_value):
        required = default_value.required_params if isinstance(default_value, FeatureTest) else []
        super().__init__(*required)
        self.flag = flag
        self.default_value = default_value

    def check(self, **env):
        default = self.default_value.check(**env) if isinstance(self.default_value, FeatureTest) else self.default_value
        return _os.environ.get(self.flag, str(default)).lower() in ["true", "1"]


class Flags:
    def __init__(self, features, environment):
        self.all = set(features.keys())
        self.enabled = set(name for name, check in features.items() if check(**environment))
        self.disabled = self.all - self.enabled

    def is_enabled(self, *names):
        return all(n in self.enabled for n in names)

    def __repr__(self):
        return "[" + " ".join(("+" if self.is_enabled(f) else "-") + f for f in sorted(self.all)) + "]"

    def __contains__(self, names):
        return all(self.is_enabled(name) for name in names.split(","))


def get_environment():
    return {"hw": "gaudi2", "model_type": "llama", "build": "1.20.0"}


@_cache
def enabled_flags():
    supported_flags = {
        "gaudi2": Hardware("gaudi2"),
        "cpu": Hardware("cpu"),
        "fp32_softmax": EnvFlag("VLLM_FP32_SOFTMAX", ModelType("qwen2")),
        "fsdpa": Not(Hardware("cpu")) & EnvFlag("VLLM_PROMPT_USE_FUSEDSDPA", Not(ModelType("qwen2"))),
    }
    detected = Flags(supported_flags, get_environment())
    print(f"Detected flags: {detected}")
    return detected


# --- mmengine / mmdet: data samples and the base data preprocessor ------------------------------------------------
class DetDataSample:
    """A metainfo + data container (mmengine BaseDataElement, trimmed)."""

    def __init__(self, metainfo: dict | None = None) -> None:
        self._metainfo_fields: set[str] = set()
        if metainfo:
            self.set_metainfo(metainfo)

    def set_metainfo(self, metainfo: dict) -> None:
        for k, v in metainfo.items():
            self._metainfo_fields.add(k)
            object.__setattr__(self, k, v)

    def metainfo_keys(self) -> list[str]:
        return sorted(self._metainfo_fields)


class BaseDataPreprocessor(nn.Module):
    def __init__(self, mean: list[float], std: list[float], pad_size_divisor: int = 1) -> None:
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(-1, 1, 1), False)
        self.register_buffer("std", torch.tensor(std).view(-1, 1, 1), False)
        self.pad_size_divisor = pad_size_divisor

    def cast_data(self, data: dict) -> dict:
        return {k: v for k, v in data.items()}

    def forward(self, data: dict, training: bool = False) -> dict:
        data = self.cast_data(data)
        inputs = [(img.float() - self.mean) / self.std for img in data["inputs"]]
        h = max(img.shape[1] for img in inputs)
        w = max(img.shape[2] for img in inputs)
        h = -(-h // self.pad_size_divisor) * self.pad_size_divisor
        w = -(-w // self.pad_size_divisor) * self.pad_size_divisor
        batch = torch.stack([nn.functional.pad(img, (0, w - img.shape[2], 0, h - img.shape[1])) for img in inputs])
        return {"inputs": batch, "data_samples": data["data_samples"]}


# --- torchrl: torchrl/modules/distributions/continuous.py (TanhNormal, trimmed) -----------------------------------
import torch.distributions as _D


class TanhNormal(_D.TransformedDistribution):
    """Normal squashed by tanh; `update` re-uses the inner Normal when the shapes match (torchrl's caching)."""

    arg_constraints = {}

    def __init__(self, loc: torch.Tensor, scale: torch.Tensor, event_dims: int = 1) -> None:
        self._event_dims = event_dims
        self._t = [_D.TanhTransform(cache_size=1)]
        self.update(loc, scale)

    def update(self, loc: torch.Tensor, scale: torch.Tensor) -> None:
        self.loc = loc
        self.scale = scale
        if (
            hasattr(self, "base_dist")
            and (self.base_dist.base_dist.loc.shape == self.loc.shape)
            and (self.base_dist.base_dist.scale.shape == self.scale.shape)
        ):
            self.base_dist.base_dist.loc = self.loc
            self.base_dist.base_dist.scale = self.scale
        else:
            base = _D.Independent(_D.Normal(self.loc, self.scale, validate_args=False), self._event_dims)
            super().__init__(base, self._t, validate_args=False)

    @property
    def mode(self) -> torch.Tensor:
        m = self.base_dist.base_dist.mean
        for t in self.transforms:
            m = t(m)
        return m
