"""Hazard: a diffusers transformer loaded from a GGUF single file keeps its Linear weights as `GGUFParameter` (an nn.Parameter subclass whose `__torch_function__` re-wraps every result with the `quant_type`) and dequantizes them on each forward; compiling the transformer, Dynamo cannot trace the subclass's `__torch_function__` (its `super().__torch_function__` call), so it graph-breaks inside the GGUF linear and recompiles the resumed frames until the recompile limit sends them to eager. From huggingface/diffusers#10795 (Can't torch.compile transformer models that load GGUF via from_single_file)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import GGUFLinear, load_q8_0

LABEL = "tensor-subclass"
SOURCE = "https://github.com/huggingface/diffusers/issues/10795"
OBSERVED = {"compiles_over_8_steps": 14, "graph_breaks": 5}
OBSERVED_BY_TORCH = {"2.11": "InternalTorchDynamoError", "2.14": "InternalTorchDynamoError"}  # 2.11: compiling fails on torch 2.11 (H100 machine); 2.14 measured on the CPU-only machine (2.14.1+cu130)


class AuraFlowBlock(nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.to_qkv = nn.Linear(dim, 3 * dim)  # kept in full precision (a `modules_to_not_convert` layer)
        self.ff = GGUFLinear(dim, dim, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_qkv(hidden_states).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(-1, -2) / 32**0.5, dim=-1) @ v
        return hidden_states + self.ff(torch.nn.functional.gelu(hidden_states + attn))


class AuraFlowTransformer2DModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = AuraFlowBlock()
        self.proj_out = nn.Linear(32, 32)

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.proj_out(self.block(hidden_states + timestep[:, None, None]))


def build() -> nn.Module:
    model = AuraFlowTransformer2DModel()
    for module in model.modules():
        if isinstance(module, GGUFLinear):
            load_q8_0(module)
    return model.eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 32), torch.tensor([1.0 - i / 8]))
