"""Clean: a pipeline module asks `_is_checkpointable(funcs)` for every layer slice inside forward (class-name checks, `isinstance`, counting `parameters()`); on torch 2.13 Dynamo traces all of it to constants, so it compiles once with no break. From deepspeedai/DeepSpeed#5759: move is_checkpointable call reducing torch.compile Graph breaks (the call in the engine's forward broke the graph on every forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/5759"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PipelineModule(nn.Module):
    def __init__(self, checkpointable_layers: list[str] | None = None) -> None:
        super().__init__()
        self.forward_funcs = nn.Sequential(*[nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.Tanh()])
        self.checkpointable_layers = checkpointable_layers
        self.activation_checkpoint_interval = 2

    def _is_checkpointable(self, funcs) -> bool:
        if self.__class__.__name__ in ("GPTModelPipe", "GPT2ModelPipe"):
            return all("ParallelTransformerLayerPipe" in f.__class__.__name__ for f in funcs)
        if self.checkpointable_layers is not None:
            return all(f.__class__.__name__ in self.checkpointable_layers for f in funcs)
        params = [f.parameters() for f in funcs if isinstance(f, nn.Module)]
        return any(len(list(p)) > 0 for p in params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        interval = self.activation_checkpoint_interval
        for start in range(0, len(self.forward_funcs), interval):
            funcs = self.forward_funcs[start : start + interval]
            if self._is_checkpointable(funcs):
                x = torch.utils.checkpoint.checkpoint(funcs, x, use_reentrant=False)
            else:
                x = funcs(x)
        return x


def build() -> nn.Module:
    return PipelineModule()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(4, 8))
    out.sum().backward()
