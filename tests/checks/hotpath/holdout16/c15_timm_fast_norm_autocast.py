"""Clean: a reported hazard that no longer reproduces on torch 2.13. timm's fast-norm switch (`set_fast_norm(enable=True)` before `create_model`) makes every LayerNorm2d run `fast_layer_norm`, which reads the autocast state and dtype and opens a nested `torch.amp.autocast(enabled=False)` around the norm. The report measured a graph break at every norm (convnext_tiny: 49 graphs, 48 breaks) on torch 2.0; on torch 2.13 Dynamo traces the autocast queries and the nested autocast region, and the compiled ConvNeXt trains under CPU bf16 autocast in one graph. From huggingface/pytorch-image-models#1725 ("fast norm results in graph breaks")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import TinyConvNeXt, set_fast_norm

LABEL = None
SOURCE = "https://github.com/huggingface/pytorch-image-models/issues/1725"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def build() -> nn.Module:
    set_fast_norm(enable=True)
    try:
        return TinyConvNeXt()
    finally:
        set_fast_norm(enable=False)


def step(model: nn.Module, i: int) -> None:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(torch.randn(2, 3, 8, 8))
    logits.float().sum().backward()
