"""Hazard: the forward runs under a user-defined tracing-span context manager and records the number of valid tokens on the span (`int(attention_mask.sum())`) inside the `with` block; that graph break happens inside a generic context manager, which Dynamo cannot resume from, so it skips the whole frame and runs the forward eagerly. From pytorch/pytorch#150477 (a graph break inside a user context manager skips the frame: `with CtxMgr(): ...`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/150477"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}


class TraceSpan:
    """A minimal tracing span (what a profiler/telemetry library hands out)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def set_attribute(self, key: str, value) -> None:
        self.attributes = getattr(self, "attributes", {})
        self.attributes[key] = value


class MaskedEncoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        with TraceSpan("encoder") as span:
            span.set_attribute("num_tokens", int(attention_mask.sum()))
            h = self.fc(x) * attention_mask.unsqueeze(-1)
            return h.sum(1) / attention_mask.sum(-1, keepdim=True)


def build() -> nn.Module:
    return MaskedEncoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 6, 8), (torch.arange(6) < torch.tensor([[3], [6], [2], [5]])).float())
