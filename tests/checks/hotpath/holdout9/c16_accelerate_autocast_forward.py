"""Clean: Accelerate's `prepare_model` with mixed precision replaces `model.forward` with `convert_outputs_to_fp32(torch.autocast(...)(model.forward))`; when reported, the decorator-built autocast wrapper sat in torch's skip files and graph-broke, but torch 2.13 inlines it and the compiled wrapper traces as one graph. From pytorch/pytorch#114818 (using torch.amp.autocast as decorator caused graph breaks)."""
from __future__ import annotations

import functools

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/114818"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def _convert_to_fp32(outputs):
    return outputs.float() if isinstance(outputs, torch.Tensor) and outputs.dtype in (torch.float16, torch.bfloat16) else outputs


class ConvertOutputsToFp32:
    def __init__(self, model_forward):
        self.model_forward = model_forward
        functools.update_wrapper(self, model_forward)

    def __call__(self, *args, **kwargs):
        return _convert_to_fp32(self.model_forward(*args, **kwargs))


def prepare_model(model: nn.Module, mixed_precision: str = "bf16") -> nn.Module:
    """accelerate.Accelerator.prepare_model, mixed-precision branch."""
    model._original_forward = model.forward
    autocast_context = torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    model_forward_func = model.forward.__func__ if hasattr(model.forward, "__func__") else model.forward
    new_forward = autocast_context(model_forward_func)
    if hasattr(model.forward, "__func__"):
        model.forward = new_forward.__get__(model)
    else:
        model.forward = new_forward
    model.forward = ConvertOutputsToFp32(model.forward)
    return model


class BasicModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear1 = nn.Linear(8, 8)
        self.linear2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class Wrapper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = prepare_model(BasicModule())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


def build() -> nn.Module:
    return Wrapper()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8)).sum()
    loss.backward()
