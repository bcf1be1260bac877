"""Clean: the LLaMA `generate` loop turns each request's `temperature` and `top_p` into tensors before calling the compiled step (the fix of pytorch-tpu/llama#22), so new sampling combinations reuse the one compiled graph."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch-tpu/llama/pull/22"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

# (temperature, top_p) of the requests served one after another
_REQUESTS = [(0.8, 0.95), (0.7, 0.9), (1.0, 0.95), (0.6, 0.8), (0.8, 0.9), (0.9, 0.99), (0.5, 0.7), (1.2, 0.9)]


def sample_top_p(probs: torch.Tensor, p) -> torch.Tensor:
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = (probs_sum - probs_sort) > p
    probs_sort = probs_sort.masked_fill(mask, 0.0)
    probs_sort = probs_sort / probs_sort.sum(dim=-1, keepdim=True)
    next_token = torch.argmax(probs_sort, dim=-1, keepdim=True)  # deterministic stand-in for multinomial
    return torch.gather(probs_idx, -1, next_token)


class Transformer(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layer = nn.Linear(dim, dim)
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor, temperature, top_p) -> torch.Tensor:
        h = torch.tanh(self.layer(self.tok_embeddings(tokens)))
        logits = self.output(h)[:, -1, :]
        probs = torch.softmax(logits / temperature, dim=-1)
        return sample_top_p(probs, top_p)


class LLaMA:
    def __init__(self, model: nn.Module) -> None:
        self.model = model

    @torch.no_grad()
    def generate(self, tokens: torch.Tensor, temperature: float = 0.8, top_p: float = 0.95) -> torch.Tensor:
        temperature_tensor = torch.tensor(temperature)
        top_p_tensor = torch.tensor(top_p)
        return self.model(tokens, temperature_tensor, top_p_tensor)


def build() -> nn.Module:
    return Transformer()


def step(model: nn.Module, i: int) -> None:
    temperature, top_p = _REQUESTS[i]
    LLaMA(model).generate(torch.randint(0, 16, (2, 6)), temperature=temperature, top_p=top_p)
