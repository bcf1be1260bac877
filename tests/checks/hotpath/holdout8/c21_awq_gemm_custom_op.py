"""Clean: the fix in vllm-project/vllm#30783 — the AWQ fused-vs-unfused choice on `num_tokens` moves inside a custom op, so Dynamo sees one opaque `awq_gemm` node and the dynamic token dimension installs no threshold guard; profile, prefill and decode batches share one graph."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/30783"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

FP16_MATMUL_TOKEN_THRESHOLD = 16


@torch.library.custom_op("holdout8_c::awq_gemm", mutates_args=())
def awq_gemm(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    if x.shape[0] >= FP16_MATMUL_TOKEN_THRESHOLD:  # decided per call, outside the traced graph
        return torch.matmul(x, (qweight.float() - qzeros) * scales)
    return torch.einsum("ti,io->to", x, (qweight.float() - qzeros) * scales)


@awq_gemm.register_fake
def _(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    return x.new_empty((x.shape[0], qweight.shape[-1]))


class AWQLinearMethod:
    def apply(self, layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
        reshaped_x = x.reshape(-1, x.shape[-1])
        out = awq_gemm(reshaped_x, layer.qweight, layer.scales, layer.qzeros)
        return out.reshape(x.shape[:-1] + (layer.qweight.shape[-1],))


class AWQLinear(nn.Module):
    def __init__(self, in_features: int = 8, out_features: int = 8) -> None:
        super().__init__()
        self.register_buffer("qweight", torch.randint(0, 16, (in_features, out_features), dtype=torch.int32))
        self.register_buffer("qzeros", torch.full((1, out_features), 8.0))
        self.register_buffer("scales", torch.full((1, out_features), 0.05))
        self.quant_method = AWQLinearMethod()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.quant_method.apply(self, x)


class TinyDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv_proj = AWQLinear()
        self.o_proj = AWQLinear()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.o_proj(torch.relu(self.qkv_proj(hidden_states)))


def build() -> nn.Module:
    return TinyDecoder()


NUM_TOKENS = [64, 24, 3, 4, 4, 5, 6, 6]


def step(model: nn.Module, i: int) -> None:
    hidden_states = torch.randn(NUM_TOKENS[i], 8)
    torch._dynamo.mark_dynamic(hidden_states, 0)
    with torch.no_grad():
        model(hidden_states)
