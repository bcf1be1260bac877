"""Library-style stand-ins used by author C's cases (holdout11 h41-h50, c21-c26).

Each block mirrors the shape of the real library code named in its comment; nothing here is a case.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from contextlib import contextmanager

import torch

logger = logging.getLogger("holdout11.helpers_c")


# --- tensorrt_llm/_utils.py style debug switch (TensorRT-LLM#9217) ---------------------------------------------------
def enable_llm_debug() -> bool:
    """True when TLLM_LLM_ENABLE_DEBUG=1 (read on every call, as the library does)."""
    return os.environ.get("TLLM_LLM_ENABLE_DEBUG", "0") == "1"


_LLM_DEBUG_AT_IMPORT = os.environ.get("TLLM_LLM_ENABLE_DEBUG_AT_IMPORT", "0") == "1"


def llm_debug_frozen() -> bool:
    """The same switch, read once when the module is imported and never changed afterwards."""
    return _LLM_DEBUG_AT_IMPORT


# --- sglang/multimodal_gen platform object (sglang#23648) ---------------------------------------------------------------
class _CpuPlatform:
    device_name = "cpu"

    @functools.lru_cache(maxsize=None)
    def is_amp_supported(self) -> bool:
        return torch.get_autocast_dtype("cpu") in (torch.bfloat16, torch.float16)


current_platform = _CpuPlatform()

FLASHINFER_AVAILABLE = False


def warn_flashinfer_missing_once() -> None:
    logger.warning("FlashInfer is not available, falling back to the torch SDPA path")


# --- physicsnemo/utils/profiling nvtx stand-in (physicsnemo#872) ---------------------------------------------------------
class _NvtxRangeStack:
    """What `nvtx.annotate` does on push/pop: a thread-local range stack with host timestamps."""

    def __init__(self) -> None:
        self.ranges: list[tuple[str, int]] = []

    def push(self, message: str) -> int:
        self.ranges.append((message, time.perf_counter_ns()))
        return len(self.ranges)

    def pop(self) -> int:
        self.ranges.pop()
        return len(self.ranges)


_nvtx = _NvtxRangeStack()


def annotate(message: str):
    """Decorator form, as in `@nvtx.annotate("HEALPixFoldFaces", color="green")`."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            _nvtx.push(message)
            try:
                return fn(*args, **kwargs)
            finally:
                _nvtx.pop()

        return inner

    return wrap


def annotate_if_not_compiling(message: str):
    """The fixed form: profiling ranges only when Dynamo is not tracing."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            if torch.compiler.is_compiling():
                return fn(*args, **kwargs)
            _nvtx.push(message)
            try:
                return fn(*args, **kwargs)
            finally:
                _nvtx.pop()

        return inner

    return wrap


# --- trainer-style parameter schedule (ptyrad#13) -----------------------------------------------------------------------
def update_requires_grad(model: torch.nn.Module, schedule: dict[str, int], it: int) -> None:
    """Turn optimisation of each named parameter on once the iteration reaches its `start_iter`."""
    for name, param in model.named_parameters():
        start = schedule.get(name.split(".")[0], 0)
        param.requires_grad_(it >= start)


@contextmanager
def no_op():
    yield


# --- ptflops-style FLOPs counter (flops-counter.pytorch#110) -------------------------------------------------------------
def linear_flops_counter_hook(module: torch.nn.Module, input, output) -> None:
    input = input[0]
    output_last_dim = output.shape[-1]
    module.__flops__ += int(input.numel() * output_last_dim)


def relu_flops_counter_hook(module: torch.nn.Module, input, output) -> None:
    module.__flops__ += int(output.numel())


MODULES_MAPPING = {torch.nn.Linear: linear_flops_counter_hook, torch.nn.ReLU: relu_flops_counter_hook}


def add_flops_counting_methods(net: torch.nn.Module, custom_modules_hooks: dict | None = None) -> torch.nn.Module:
    """Attach `__flops__` counters and forward hooks to every supported module, as `ptflops` does."""
    mapping = {**MODULES_MAPPING, **(custom_modules_hooks or {})}
    for module in net.modules():
        hook = mapping.get(type(module))
        if hook is not None:
            module.__flops__ = 0
            module.__flops_handle__ = module.register_forward_hook(hook)
    return net


def compute_average_flops_cost(net: torch.nn.Module, batches: int) -> float:
    return sum(getattr(m, "__flops__", 0) for m in net.modules()) / max(batches, 1)



def add_flops_counting_buffers(net: torch.nn.Module, custom_modules_hooks: dict | None = None) -> torch.nn.Module:
    """The same counters kept as 0-dim int64 buffers, so a hook's `+=` is an in-place tensor update."""
    mapping = {**MODULES_MAPPING, **(custom_modules_hooks or {})}
    for module in net.modules():
        hook = mapping.get(type(module))
        if hook is not None:
            module.register_buffer("__flops__", torch.zeros((), dtype=torch.int64), persistent=False)
            module.__flops_handle__ = module.register_forward_hook(hook)
    return net


# --- deepspeed/runtime/activation_checkpointing/checkpointing.py style module globals (DeepSpeed#6541) -------------------
mpu = None
mp_rank = None
mp_size = None
cuda_device = None
num_layers = None
PARTITION_ACTIVATIONS = False
CONTIGUOUS_CHECKPOINTING = False


def _get_rank_and_size() -> tuple[int, int]:
    return 0, 1


def checkpoint(function, *args):
    """Checkpoint a model or part of the model; sets module globals on the way, as the DeepSpeed version did."""
    global mp_rank, mp_size, cuda_device, num_layers
    if mp_rank is None:  # "is this the first call" bookkeeping done in the hot path
        mp_rank, mp_size = _get_rank_and_size()
    cuda_device = args[0].device
    num_layers = (num_layers or 0) + 1
    return torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=False)


def configure_checkpointing(num_checkpoints: int = 0) -> None:
    """The fixed flow: everything the hot path needs is set once here, before training starts."""
    global mp_rank, mp_size, num_layers
    mp_rank, mp_size = _get_rank_and_size()
    num_layers = num_checkpoints


def checkpoint_configured(function, *args):
    """The fixed hot path: only reads the globals `configure_checkpointing` set."""
    if PARTITION_ACTIVATIONS and mp_size > 1:
        raise NotImplementedError
    return torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=False)


# --- composer-style trainer with device_train_microbatch_size="auto" (composer#2214) -------------------------------------
class AutoMicrobatchTrainer:
    """Splits each batch into microbatches; on a (simulated) CUDA OOM it halves the microbatch size and retries."""

    def __init__(self, model: torch.nn.Module, device_train_microbatch_size: int | str = "auto", memory_budget: int = 64):
        self.model = model
        self.auto = device_train_microbatch_size == "auto"
        self.microbatch_size = None if self.auto else int(device_train_microbatch_size)
        self.memory_budget = memory_budget  # stands in for the device memory the OOM check hits

    def _would_oom(self, microbatch: torch.Tensor, step: int) -> bool:
        # activation memory grows over the first steps (longer sequences arrive), as in the report's warm-up
        return microbatch.numel() * (1 + step) > self.memory_budget * 8

    def train_batch(self, batch: torch.Tensor, target: torch.Tensor, step: int) -> None:
        if self.microbatch_size is None:
            self.microbatch_size = batch.shape[0]
        while True:
            mb = self.microbatch_size
            if self.auto and mb > 1 and self._would_oom(batch[:mb], step):
                self.microbatch_size = mb // 2  # "CUDA out of memory": halve and retry
                continue
            break
        for start in range(0, batch.shape[0], mb):
            out = self.model(batch[start : start + mb])
            loss = torch.nn.functional.mse_loss(out, target[start : start + mb])
            loss.backward()
