"""Hazard: in a PPO loop over a Megatron-style GPT, the fused `bias_dropout_add` module (what `jit_fuser`/torch.compile wraps) is fed inputs whose `requires_grad` differs between layers and phases (frozen embedding output into layer 0, rollout under `no_grad`, update with grad), so its compiled code keeps failing the requires_grad / grad-mode guards and recompiles. From NVIDIA/Megatron-LM#1888 (torch.compile hits recompile limit on fused_bias_dropout due to `requires_grad mismatch` in PPO loop)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "grad-mode"
SOURCE = "https://github.com/NVIDIA/Megatron-LM/issues/1888"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
REGION = "decoder.layers.*.self_attn_bda"


class BiasDropoutAdd(nn.Module):
    """megatron.core.fusions.fused_bias_dropout.bias_dropout_add_fused_train as a module."""

    def __init__(self, hidden_dropout: float) -> None:
        super().__init__()
        self.prob = hidden_dropout

    def forward(self, x_with_bias: tuple[torch.Tensor, torch.Tensor], residual: torch.Tensor) -> torch.Tensor:
        x, bias = x_with_bias
        out = torch.nn.functional.dropout(x + bias, p=self.prob, training=True)
        return residual + out


class TransformerLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.linear_proj = nn.Linear(hidden, hidden, bias=False)
        self.proj_bias = nn.Parameter(torch.zeros(hidden))
        self.self_attn_bda = BiasDropoutAdd(0.1)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        residual = hidden_states
        attn_out = self.linear_proj(self.input_layernorm(hidden_states))
        return self.self_attn_bda((attn_out, self.proj_bias), residual)


class TransformerBlock(nn.Module):
    def __init__(self, num_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(TransformerLayer() for _ in range(num_layers))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class GPTModel(nn.Module):
    def __init__(self, vocab: int = 16, hidden: int = 8) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.embedding.weight.requires_grad_(False)  # frozen embeddings in RL fine-tuning
        self.decoder = TransformerBlock()
        self.output_layer = nn.Linear(hidden, vocab)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.output_layer(self.decoder(self.embedding(input_ids)))


def build() -> nn.Module:
    return GPTModel()


def step(model: nn.Module, i: int) -> None:
    prompts = torch.randint(0, 16, (2, 5))
    # rollout (generation / old log-probs) without autograd
    with torch.no_grad():
        old_logits = model(prompts)
    # PPO update
    logits = model(prompts)
    ratio = torch.exp(torch.log_softmax(logits, -1) - torch.log_softmax(old_logits, -1))
    (-ratio.mean()).backward()
    model.zero_grad(set_to_none=True)
