"""Clean: the same vLLM-on-Neuron sampling module, but temperature is always applied as a tensor division (`torch.divide(values, temperature)` for every row, a no-op where it is 1.0) instead of behind `if torch.any(temperature != 1.0):`, so the changing batch temperatures only change tensor values and one graph serves every step. From huggingface/optimum-neuron#1055 (the review asks why the `if` is needed at all)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/optimum-neuron/pull/1055"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Sampler(nn.Module):
    """NxDI-style on-device sampling: per-request (top_k, top_p, temperature) rows in `sampling_params`."""

    def __init__(self, max_top_k: int = 8) -> None:
        super().__init__()
        self.max_top_k = max_top_k

    def _top_k_masked(self, token_logits: torch.Tensor, top_k: torch.Tensor, dim: int):
        values, indices = torch.topk(token_logits, self.max_top_k, dim=dim)
        ranks = torch.arange(self.max_top_k).unsqueeze(0)
        values = values.masked_fill(ranks >= top_k.unsqueeze(-1), float("-inf"))
        return values, indices

    def _multinomial_sample(self, token_logits: torch.Tensor, sampling_params: torch.Tensor, dim: int = -1):
        top_k = sampling_params[:, 0].long()
        top_p = sampling_params[:, 1]
        temperature = sampling_params[:, 2].unsqueeze(-1)
        top_k_logits_values, top_k_logits_indices = self._top_k_masked(token_logits, top_k, dim)
        top_k_logits_values = torch.divide(top_k_logits_values, temperature)
        probs = torch.softmax(top_k_logits_values, dim=dim)
        cum = torch.cumsum(probs, dim=dim)
        probs = probs.masked_fill(cum - probs > top_p.unsqueeze(-1), 0.0)
        choice = torch.argmax(probs / torch.rand_like(probs).clamp(min=1e-6).log().neg(), dim=dim, keepdim=True)
        return torch.gather(top_k_logits_indices, dim, choice).squeeze(-1)

    def forward(self, token_logits: torch.Tensor, sampling_params: torch.Tensor) -> torch.Tensor:
        return self._multinomial_sample(token_logits, sampling_params)


def build() -> nn.Module:
    return Sampler()


def step(model: nn.Module, i: int) -> None:
    # the running batch changes as requests with different sampling settings come and go
    temperatures = [1.0, 1.0, 0.7, 0.7, 1.0, 0.9, 1.0, 0.7][i]
    sampling_params = torch.tensor([[5.0, 0.9, temperatures], [8.0, 1.0, 1.0]])
    with torch.no_grad():
        model(torch.randn(2, 32), sampling_params)
