"""Hazard: vLLM's AWQ linear method picks the fused awq_gemm kernel or dequantize+matmul by `num_tokens >= 256` in Python inside the compiled model; the token dimension is marked dynamic, so the heuristic becomes a shape guard and the first decode batch below the threshold (after the large profile/prefill batch) recompiles the whole model. From vllm-project/vllm#30783 (AWQ: evaluate fused vs unfused GEMM on actual shape)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/vllm-project/vllm/pull/30783"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

FP16_MATMUL_TOKEN_THRESHOLD = 16  # 256 in vLLM, scaled to the toy batch sizes


def awq_dequantize(qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    return (qweight.float() - qzeros) * scales


def awq_gemm(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor) -> torch.Tensor:
    # stands for the fused CUDA kernel: dequantizes group by group inside the GEMM
    return torch.einsum("ti,io->to", x, (qweight.float() - qzeros) * scales)


class AWQLinearMethod:
    """Library object held by the layer (vllm.model_executor.layers.quantization.awq.AWQLinearMethod)."""

    def apply(self, layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
        reshaped_x = x.reshape(-1, x.shape[-1])
        # num_tokens >= threshold: dequantize once and use the BLAS matmul
        FP16_MATMUL_HEURISTIC_CONDITION = x.shape[:-1].numel() >= FP16_MATMUL_TOKEN_THRESHOLD
        if FP16_MATMUL_HEURISTIC_CONDITION:
            out = awq_dequantize(layer.qweight, layer.scales, layer.qzeros)
            out = torch.matmul(reshaped_x, out)
        else:
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


# the engine's profile run at max_num_batched_tokens, then a prefill, then continuous-batching decode steps
NUM_TOKENS = [64, 24, 3, 4, 4, 5, 6, 6]


def step(model: nn.Module, i: int) -> None:
    hidden_states = torch.randn(NUM_TOKENS[i], 8)
    torch._dynamo.mark_dynamic(hidden_states, 0)  # what @support_torch_compile does for the token dimension
    with torch.no_grad():
        model(hidden_states)
