"""Clean: the fix in intel/llm-scaler#635 — the Punica wrapper's no-adapter fast path goes through `_should_skip_lora()`, which answers False while Dynamo is tracing, so the compiled graph always carries the LoRA delta (masked per token) and never reads the mutable `no_lora` flag; eager callers keep the shortcut. One compile across adapter and no-adapter batches."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/intel/llm-scaler/pull/635"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PunicaWrapperXPU:
    """Shared by every LoRA layer; holds the per-step adapter mapping prepared on the host."""

    def __init__(self, max_loras: int = 2, max_tokens: int = 16) -> None:
        self.no_lora = True
        self.token_lora_indices = torch.full((max_tokens,), -1, dtype=torch.long)

    def update_metadata(self, token_lora_mapping: list[int]) -> None:
        n = len(token_lora_mapping)
        self.token_lora_indices[:n] = torch.tensor(token_lora_mapping)
        self.token_lora_indices[n:] = -1
        self.no_lora = all(idx < 0 for idx in token_lora_mapping)

    def _should_skip_lora(self) -> bool:
        if torch.compiler.is_compiling():
            return False
        return self.no_lora

    def add_lora_linear(self, y: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor) -> torch.Tensor:
        if self._should_skip_lora():
            return y
        idx = self.token_lora_indices[: x.shape[0]]
        mask = (idx >= 0).to(x.dtype)[:, None]
        a = lora_a[idx.clamp(min=0)]  # [tokens, rank, in]
        b = lora_b[idx.clamp(min=0)]  # [tokens, out, rank]
        delta = torch.einsum("tor,tri,ti->to", b, a, x)
        return y + mask * delta


class ColumnParallelLinearWithLoRA(nn.Module):
    def __init__(self, base: nn.Linear, punica_wrapper: PunicaWrapperXPU, max_loras: int = 2, rank: int = 2) -> None:
        super().__init__()
        self.base_layer = base
        self.punica_wrapper = punica_wrapper
        self.lora_a_stacked = nn.Parameter(torch.randn(max_loras, rank, base.in_features) * 0.1, requires_grad=False)
        self.lora_b_stacked = nn.Parameter(torch.randn(max_loras, base.out_features, rank) * 0.1, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base_layer(x)
        return self.punica_wrapper.add_lora_linear(y, x, self.lora_a_stacked, self.lora_b_stacked)


class TinyLoRAModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.punica_wrapper = PunicaWrapperXPU()
        self.qkv_proj = ColumnParallelLinearWithLoRA(nn.Linear(8, 8), self.punica_wrapper)
        self.down_proj = ColumnParallelLinearWithLoRA(nn.Linear(8, 8), self.punica_wrapper)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.down_proj(torch.relu(self.qkv_proj(hidden_states)))


def build() -> nn.Module:
    return TinyLoRAModel()


# per-token adapter ids of each scheduled batch (-1: base model); profiling and the first requests use no adapter
BATCHES = [[-1] * 8, [-1] * 8, [0, 0, -1, -1, 1, 1, -1, -1], [0] * 8, [-1] * 8, [1] * 8, [-1] * 8, [0, 1] * 4]


def step(model: nn.Module, i: int) -> None:
    model.punica_wrapper.update_metadata(BATCHES[i])  # the model runner, before the forward
    with torch.no_grad():
        model(torch.randn(8, 8))
