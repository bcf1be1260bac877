"""Library stand-ins for author B's cases in holdout14 (a forward-context registry, a cache-hook state, metric helpers).

They mirror the shape of the real library code each case was reduced from; nothing here is compiled on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

# --- vllm-style forward context: layers register themselves by name, attention looks itself up by name ----------

_static_forward_context: dict[str, object] = {}


def register_layer(layer_name: str, layer: object) -> None:
    _static_forward_context[layer_name] = layer


def get_attention_context(layer_name: str):
    """Return (layer, kv_cache) for a layer name, as vllm's `get_attention_context` does."""
    layer = _static_forward_context[layer_name]
    return layer, layer.kv_cache


# --- diffusers-style pyramid attention broadcast state held by a hook object ---------------------------------------


@dataclass
class PyramidAttentionBroadcastState:
    iteration: int = 0
    cache: torch.Tensor | None = None

    def reset(self) -> None:
        self.iteration = 0
        self.cache = None


@dataclass
class PyramidAttentionBroadcastConfig:
    spatial_attention_block_skip_range: int = 2
    spatial_attention_timestep_skip_range: tuple[int, int] = (100, 800)


class PyramidAttentionBroadcastHook:
    """Wraps an attention module's forward: recompute every `skip_range` iterations, reuse the cached output otherwise."""

    def __init__(self, skip_range: int) -> None:
        self.skip_range = skip_range
        self.state = PyramidAttentionBroadcastState()

    def new_forward(self, module, original_forward, hidden_states):
        should_compute = self.state.cache is None or self.state.iteration % self.skip_range == 0
        if should_compute:
            output = original_forward(hidden_states)
            self.state.cache = output
        else:
            output = self.state.cache
        self.state.iteration += 1
        return output


# --- torchrec-style window aggregation that the library keeps out of compiled code --------------------------------


@torch.compiler.disable
def _aggregate_window_state(window_state: dict[str, list[torch.Tensor]], name: str, value: torch.Tensor, window: int) -> None:
    buf = window_state.setdefault(name, [])
    buf.append(value.detach())
    if len(buf) > window:
        buf.pop(0)


@dataclass
class WindowBuffers:
    window_size: int = 4
    states: dict[str, list[torch.Tensor]] = field(default_factory=dict)


# --- an op-counting TorchFunctionMode that a profiling tracker enters around each training step ---------------------

from torch.overrides import TorchFunctionMode  # noqa: E402


class OpCounterMode(TorchFunctionMode):
    """Counts torch function calls, like the CounterMode / metadata modes trackers wrap around a step."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


class StepProfiler:
    def __init__(self) -> None:
        self.mode = OpCounterMode()
        self.history: list[int] = []

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        self.history.append(self.mode.count)
        return False


# --- a module-level activation summary that blocks write into and the loop resets every step ------------------------

summary: dict[str, object] = {}


def reset_summary() -> None:
    global summary
    summary = {}


def add_summary(name: str, value: object) -> None:
    summary[name] = value
