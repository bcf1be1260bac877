"""Hazard: TensorRT-LLM's piecewise CUDA-graph warm-up runs the compiled model once per configured prefill capture shape with the token dimension marked static, so every capture shape is its own specialised graph; the model engine raises the recompile limit for this, but the executor loop runs in another context that still sees the default of 8, so serving hits the recompile limit and falls back to eager. From NVIDIA/TensorRT-LLM#18492 (preserve Dynamo recompile limit in executor context)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/pull/18492"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden)
        self.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.SiLU(), nn.Linear(2 * hidden, hidden))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(self.input_layernorm(hidden_states)).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.t() / 8 ** 0.5, dim=-1) @ v
        hidden_states = hidden_states + self.o_proj(attn)
        return hidden_states + self.mlp(hidden_states)


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 64, hidden: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layer = DecoderLayer(hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.layer(self.embed_tokens(input_ids)))


def build() -> nn.Module:
    return LlamaForCausalLM()


class PiecewiseCudaGraphRunner:
    capture_num_tokens = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

    def warmup_and_capture(self, model: nn.Module, idx: int) -> None:
        num_tokens = self.capture_num_tokens[idx]
        input_ids = torch.zeros(num_tokens, dtype=torch.long)
        torch._dynamo.mark_static(input_ids, 0)  # a CUDA graph is captured for exactly this shape
        with torch.inference_mode():
            model(input_ids)


RUNNER = PiecewiseCudaGraphRunner()


def step(model: nn.Module, i: int) -> None:
    RUNNER.warmup_and_capture(model, i)
