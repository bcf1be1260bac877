"""Hazard: a quantized model (every `QuantLinear` carries a nested `weight_quant` proxy module) is dispatched with
accelerate, which attaches an `AlignDevicesHook` to every module with direct parameters, turning each module's
`forward` into its own `functools.partial`; each `QuantLinear` is then compiled on its own, and Dynamo guards on the
identity of the nested proxy's hooked `forward`, so every layer recompiles the shared frame. From
huggingface/accelerate#3415 (GPU/CPU offloading and preload_module_classes: `_hf_hook` on nested modules causes
excessive recompilation)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import AlignDevicesHook, add_hook_to_module, attach_align_device_hook

LABEL = "hook"
SOURCE = "https://github.com/huggingface/accelerate/issues/3415"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 2, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 2, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)
REGION = "model.layers.*.mlp.*"


class WeightQuantProxy(nn.Module):
    """brevitas-style weight quantizer proxy: a learned per-channel scale, fake-quantized to int8."""

    def __init__(self, out_features: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.full((out_features, 1), 0.05))

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.round(weight / self.scale), -128, 127) * self.scale


class QuantLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__(in_features, out_features, bias)
        self.weight_quant = WeightQuantProxy(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight_quant(self.weight), self.bias)


class MLP(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.up_proj = QuantLinear(dim, 16)
        self.down_proj = QuantLinear(16, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.up_proj(x)))


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.mlp = MLP()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class QuantizedLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = Decoder()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


def dispatch_model(model: nn.Module, device_map: dict[str, str]) -> nn.Module:
    """accelerate.big_modeling.dispatch_model, reduced: nothing offloaded, one execution device."""
    execution_device = torch.device(device_map[""])
    attach_align_device_hook(model, execution_device, preload_module_classes=["QuantLinear"])
    add_hook_to_module(model, AlignDevicesHook(execution_device=execution_device, io_same_device=True))
    return model


def build() -> nn.Module:
    return dispatch_model(QuantizedLM(), device_map={"": "cpu"})


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))  # calibration / evaluation pass
