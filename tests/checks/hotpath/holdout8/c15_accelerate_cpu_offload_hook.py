"""Clean: a diffusers-style pipeline enables model CPU offload (accelerate `cpu_offload_with_hook` chains a `CpuOffload` hook on each component) and then compiles the transformer in place, so the compiled call runs the hook's `pre_forward` (offload the previous component, `module.to(execution_device)`, `send_to_device` on the inputs). The report saw this fail to compile; on torch 2.13 with the execution device on CPU, Dynamo traces the hook (the moves are no-ops) and compiles once with no graph break. Reported as a hazard in pytorch/pytorch#150711 ([ued] HF diffusers pipeline `enable_cpu_offload` errors or graph breaks with a `torch.compile`-ed transformer); kept as a look-alike because it does not reproduce here."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import cpu_offload_with_hook

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/150711"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 6, "graph_breaks": 4}}  # measured on the H100 machine


class TextEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


class TransformerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.ff = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        x = x + torch.softmax(self.attn(x) @ context.transpose(-1, -2), dim=-1) @ context
        return x + self.ff(torch.nn.functional.gelu(x))


class Transformer2DModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(TransformerBlock() for _ in range(2))
        self.proj_out = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            hidden_states = block(hidden_states, encoder_hidden_states)
        return self.proj_out(hidden_states)


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.text_encoder = TextEncoder()
        self.transformer = Transformer2DModel()

    def enable_model_cpu_offload(self, device: str = "cpu") -> None:
        hook = None
        for component in (self.text_encoder, self.transformer):  # model_cpu_offload_seq = "text_encoder->transformer"
            _, hook = cpu_offload_with_hook(component, device, prev_module_hook=hook)


REGION = "transformer"


def build() -> nn.Module:
    pipe = Pipeline()
    pipe.enable_model_cpu_offload()
    return pipe


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        context = model.text_encoder(torch.randn(1, 3, 8))
        latents = torch.randn(1, 4, 8)
        for _ in range(2):  # denoising steps
            latents = latents - 0.1 * model.transformer(latents, context)
