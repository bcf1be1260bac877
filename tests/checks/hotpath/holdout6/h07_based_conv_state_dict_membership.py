"""Hazard: a Based-style model compiled for generation keeps per-layer recurrent conv states in
`inference_params.key_value_memory_dict` and picks the prefill or the decode path with `if self.layer_idx in
inference_params.key_value_memory_dict`; Dynamo guards on the dict's contents (`not key_value_memory_dict`), so the
prefill call (empty dict) and the decode calls (one state per layer) need separate graphs even though the input
shape is the same one token. From pytorch/pytorch#143670 (potential rooms for fewer recompilations by introducing
higher-level guards: `n in int_dict` guards on `len(int_dict)`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/pytorch/pytorch/issues/143670"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


@dataclass
class InferenceParams:
    max_seqlen: int
    max_batch_size: int
    seqlen_offset: int = 0
    key_value_memory_dict: dict = field(default_factory=dict)


class BaseConv(nn.Module):
    def __init__(self, dim: int, kernel_size: int, layer_idx: int) -> None:
        super().__init__()
        self.in_proj = nn.Linear(dim, dim)
        self.conv = nn.Conv1d(dim, dim, kernel_size, groups=dim, padding=kernel_size - 1)
        self.out_proj = nn.Linear(dim, dim)
        self.kernel_size = kernel_size
        self.layer_idx = layer_idx

    def forward(self, u: torch.Tensor, inference_params: InferenceParams | None = None) -> torch.Tensor:
        u = self.in_proj(u)
        if inference_params is not None and self.layer_idx in inference_params.key_value_memory_dict:
            state = inference_params.key_value_memory_dict[self.layer_idx]  # decode: roll the conv state
            state.copy_(torch.roll(state, -1, dims=-1))
            state[:, :, -1] = u[:, -1]
            y = (state * self.conv.weight.squeeze(1)).sum(-1, keepdim=True).transpose(1, 2) + self.conv.bias
        else:
            y = self.conv(u.transpose(1, 2))[..., : u.shape[1]].transpose(1, 2)  # prefill
            if inference_params is not None:
                state = F.pad(u.transpose(1, 2), (self.kernel_size - u.shape[1], 0))[..., -self.kernel_size :]
                inference_params.key_value_memory_dict[self.layer_idx] = state.contiguous()
        return self.out_proj(F.silu(y))


class Block(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mixer = BaseConv(dim, kernel_size=3, layer_idx=layer_idx)

    def forward(self, x: torch.Tensor, inference_params: InferenceParams | None = None) -> torch.Tensor:
        return x + self.mixer(self.norm(x), inference_params)


class GPTLMHeadModel(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, n_layer: int = 2) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, i) for i in range(n_layer))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, inference_params: InferenceParams | None = None) -> torch.Tensor:
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h, inference_params)
        return self.lm_head(h)


_state: dict[str, object] = {}


def build() -> nn.Module:
    _state.clear()
    return GPTLMHeadModel().eval()


def step(model: nn.Module, i: int) -> None:
    """One call of the decoding loop: a new sample every 4 steps (prefill), then single-token decode steps."""
    with torch.no_grad():
        if i % 4 == 0:
            prompt = torch.zeros(1, 1, dtype=torch.long)  # unconditional sample: the prompt is the BOS token
            params = InferenceParams(max_seqlen=16, max_batch_size=1)
            logits = model(prompt, params)
            params.seqlen_offset += prompt.shape[1]
            _state.update(params=params)
        else:
            params = _state["params"]
            logits = model(_state["next"], params)
            params.seqlen_offset += 1
        _state["next"] = logits[:, -1:].argmax(-1)
