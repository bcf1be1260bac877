"""Hazard: a Mamba-style mixer branches on `cache_params.seqlen_offset > 0`, a Python int held in the cache object that the generation loop advances after every decoding step, so the compiled forward is guarded on the int and recompiles once it leaves 0 (the int then goes dynamic behind a `> 0` guard); before the switch to a `cache_position` tensor. From huggingface/transformers#31247 (Add torch.compile support for Mamba)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import MambaCache, update_model_kwargs_for_generation

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/transformers/pull/31247"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

DIM, KERNEL = 8, 4


class MambaMixer(nn.Module):
    def __init__(self, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.in_proj = nn.Linear(DIM, DIM)
        self.conv1d = nn.Conv1d(DIM, DIM, KERNEL, groups=DIM, padding=KERNEL - 1)
        self.out_proj = nn.Linear(DIM, DIM)

    def forward(self, hidden_states: torch.Tensor, cache_params: MambaCache | None = None) -> torch.Tensor:
        x = self.in_proj(hidden_states).transpose(1, 2)  # (B, D, L)
        if cache_params is not None and cache_params.seqlen_offset > 0:
            conv_state = torch.roll(cache_params.conv_states[self.layer_idx], shifts=-1, dims=-1)
            conv_state[:, :, -1] = x[:, :, 0]
            cache_params.conv_states[self.layer_idx].copy_(conv_state)
            x = torch.sum(conv_state * self.conv1d.weight[:, 0, :], dim=-1).unsqueeze(-1)
        else:
            if cache_params is not None:
                cache_params.conv_states[self.layer_idx].copy_(
                    nn.functional.pad(x, (KERNEL - x.shape[-1], 0))[:, :, -KERNEL:]
                )
            x = self.conv1d(x)[..., : hidden_states.shape[1]]
        return self.out_proj(torch.nn.functional.silu(x).transpose(1, 2))


class MambaForCausalLM(nn.Module):
    def __init__(self, num_layers: int = 2, vocab: int = 16) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, DIM)
        self.layers = nn.ModuleList(MambaMixer(i) for i in range(num_layers))
        self.lm_head = nn.Linear(DIM, vocab)

    def forward(self, input_ids: torch.Tensor, cache_params: MambaCache | None = None) -> torch.Tensor:
        h = self.embeddings(input_ids)
        for mixer in self.layers:
            h = h + mixer(h, cache_params=cache_params)
        return self.lm_head(h)


def build() -> nn.Module:
    model = MambaForCausalLM()
    model.eval()
    model._generation_state = {"cache_params": MambaCache(len(model.layers), 1, DIM, KERNEL)}
    return model


def step(model: nn.Module, i: int) -> None:
    # greedy decoding, one new token per step after a 1-token prompt (the prompt shape stays fixed)
    model_kwargs = model._generation_state
    input_ids = torch.tensor([[i % 16]])
    with torch.no_grad():
        model(input_ids, cache_params=model_kwargs["cache_params"])
    update_model_kwargs_for_generation(model_kwargs, input_ids)
