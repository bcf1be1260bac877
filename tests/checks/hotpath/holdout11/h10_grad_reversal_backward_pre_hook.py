"""Hazard: a domain-adaptation model reverses and scales gradients into its domain classifier with `register_full_backward_pre_hook` on that head; Dynamo cannot put module full-backward hooks into a graph, so the compiled forward breaks where the hooked head is called and the rest of the forward is compiled as a second frame. From pytorch/pytorch#117266 (torch.compile: full_backward_pre_hook induces a graph break)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/117266"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

GRL_LAMBDA = 0.1


def reverse_gradient(module: nn.Module, grad_output: tuple) -> tuple:
    return tuple(-GRL_LAMBDA * g for g in grad_output)


class DANN(nn.Module):
    def __init__(self, dim: int = 8, classes: int = 3) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self.label_head = nn.Linear(dim, classes)
        self.domain_head = nn.Linear(dim, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.features(x)
        return self.label_head(h), self.domain_head(h)


def build() -> nn.Module:
    model = DANN()
    model.domain_head.register_full_backward_pre_hook(reverse_gradient)
    return model


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8, requires_grad=True)
    labels, domains = torch.randint(0, 3, (4,)), torch.randint(0, 2, (4,))
    class_logits, domain_logits = model(x)
    loss = nn.functional.cross_entropy(class_logits, labels) + nn.functional.cross_entropy(domain_logits, domains)
    loss.backward()
