"""Hazard: bitsandbytes' Linear8bitLt forward runs its int8 state machine inside the compiled region: on the first call `init_8bit_state()` moves CB/SCB from the Int8Params weight into the MatmulLtState and sets `weight.CB = None`, and every call writes `state.is_training` and rebinds `weight.data`; the guard on `weight.CB is not None` fails on the second call and the layer recompiles. From the LLM.int8() torch.compile work in bitsandbytes-foundation/bitsandbytes#1617."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1617"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class MatmulLtState:
    """bnb.MatmulLtState: a plain Python object carried by the layer."""

    def __init__(self) -> None:
        self.CB: torch.Tensor | None = None
        self.SCB: torch.Tensor | None = None
        self.threshold = 0.0
        self.has_fp16_weights = False
        self.is_training = False


class Int8Params(nn.Parameter):
    def __new__(cls, data: torch.Tensor, requires_grad: bool = False):
        obj = super().__new__(cls, data, requires_grad)
        obj.CB = None
        obj.SCB = None
        return obj

    def quantize_(self) -> "Int8Params":
        # what `.cuda()` does in bnb: row-wise absmax int8 quantization, kept on the parameter
        scb = self.data.abs().amax(dim=1).clamp(min=1e-6)
        cb = torch.round(self.data / scb[:, None] * 127).to(torch.int8)
        self.CB, self.SCB = cb, scb
        self.data = cb.float()
        return self


def int8_matmul(x: torch.Tensor, state: MatmulLtState, bias: torch.Tensor | None) -> torch.Tensor:
    w = state.CB.float() * (state.SCB[:, None] / 127)
    out = x @ w.t()
    return out + bias if bias is not None else out


class Linear8bitLt(nn.Linear):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__(in_features, out_features, bias)
        self.state = MatmulLtState()
        self.weight = Int8Params(self.weight.data)
        self.weight.quantize_()

    def init_8bit_state(self) -> None:
        self.state.CB = self.weight.CB
        self.state.SCB = self.weight.SCB
        self.weight.CB = None
        self.weight.SCB = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.state.is_training = self.training
        if self.weight.CB is not None:
            self.init_8bit_state()
        out = int8_matmul(x, self.state, self.bias)
        if not self.state.has_fp16_weights and self.state.CB is not None:
            self.weight.data = self.state.CB.float()
        return out


class Int8MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up_proj = Linear8bitLt(8, 8)
        self.down_proj = Linear8bitLt(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(torch.nn.functional.gelu(self.up_proj(x)))


def build() -> nn.Module:
    return Int8MLP().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
