"""Clean: the same per-layer-compiled LoRA decoder with the base model frozen, but the recipe calls `enable_input_require_grads()` (a forward hook on the input embeddings that marks their output as requiring grad), so every layer sees inputs that require grad and the shared layer code compiles once. Look-alike of h26 (pytorch/pytorch#141039)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import LoRALinear, enable_input_require_grads, set_trainable_params

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/141039"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*"


class TransformerSelfAttentionLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.sa_norm = nn.RMSNorm(dim)
        self.q_proj = LoRALinear(dim, dim)
        self.v_proj = LoRALinear(dim, dim)
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.sa_norm(x)
        attn = torch.softmax(self.q_proj(h) @ h.transpose(-1, -2), dim=-1) @ self.v_proj(h)
        return x + self.output_proj(attn)


class TransformerDecoder(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, n_layers: int = 3) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(TransformerSelfAttentionLayer(dim) for _ in range(n_layers))
        self.norm = nn.RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def build() -> nn.Module:
    model = TransformerDecoder()
    set_trainable_params(model)
    enable_input_require_grads(model)
    return model


def step(model: nn.Module, i: int) -> None:
    g = torch.Generator().manual_seed(i)
    tokens = torch.randint(0, 32, (2, 6), generator=g)
    logits = model(tokens)
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 32), tokens[:, 1:].reshape(-1))
    loss.backward()
