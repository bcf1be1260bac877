"""Models for the scenarios: tiny Hugging Face decoders (built from configs, never downloaded) and small parts.

`transformers` is an optional extra: only the Llama/Qwen2 builders import it, lazily.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

VOCAB = 128


def llama_config(layers: int = 2, hidden: int = 64) -> Any:
    """A tiny Llama-shaped config (GQA, RoPE, SwiGLU) with the 70B's structure and toy sizes."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        attn_implementation="sdpa",
    )


def build_llama(layers: int = 2, hidden: int = 64) -> nn.Module:
    """A randomly initialised `LlamaForCausalLM` (deterministic weights, eval mode)."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(llama_config(layers, hidden)).eval()


def build_qwen2(layers: int = 2, hidden: int = 64) -> nn.Module:
    """A randomly initialised `Qwen2ForCausalLM` (deterministic weights, eval mode)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        attn_implementation="sdpa",
    )
    return Qwen2ForCausalLM(cfg).eval()


@torch.no_grad()
def decode(model: nn.Module, *, batch: int = 1, prompt: int = 8, new_tokens: int = 8, seed: int = 0) -> torch.Tensor:
    """Greedy generation with a growing `DynamicCache`: one prefill, then one token per step."""
    from transformers import DynamicCache

    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (batch, prompt), generator=gen).to(next(model.parameters()).device)
    cache = DynamicCache()
    new_name = takes_cache(model)
    logits = cached_forward(model, ids, cache, new_name)
    tokens = [ids]
    for _ in range(new_tokens):
        nxt = logits[:, -1:].argmax(-1)
        tokens.append(nxt)
        logits = cached_forward(model, nxt, cache, new_name)  # the cache grows in place
    return torch.cat(tokens, dim=1)


def takes_cache(model: nn.Module) -> bool:
    """Whether the model's forward names its KV cache `cache` (transformers 5.24; `past_key_values` is deprecated
    there, a FutureWarning) rather than `past_key_values` (transformers 5.17, which has no `cache`)."""
    import inspect

    return "cache" in inspect.signature(model.forward).parameters


def cached_forward(model: nn.Module, ids: torch.Tensor, cache: Any, new_name: bool) -> torch.Tensor:
    """One forward that reads and extends `cache`, under the argument name the installed transformers knows."""
    if new_name:
        return model(input_ids=ids, cache=cache, use_cache=True).logits
    return model(input_ids=ids, past_key_values=cache, use_cache=True).logits


def decode_steps(model: nn.Module) -> Any:
    """`step(model, i)` for the contract: a short generation per step."""
    return decode(model, batch=1, prompt=4, new_tokens=2)


# Scenario 1: a multi-part model whose parts need different compile settings.


class Preprocess(nn.Module):
    """Clips outliers with a data-dependent branch (`.item()`): a graph break, so the contract keeps it eager."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.abs().max().item() > 4.0:
            x = x.clamp(-4.0, 4.0)
        return x


class Encoder(nn.Module):
    """Sequence encoder fed variable-length batches: compiled with `dynamic = true` (one graph for all lengths)."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + nn.functional.gelu(self.proj(x)))


class Head(nn.Module):
    """Pooled projection: a fixed-shape hot spot, compiled with a non-default Inductor mode."""

    def __init__(self, dim: int = 32, classes: int = 16) -> None:
        super().__init__()
        self.out = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(x.mean(dim=1))


class Sampler(nn.Module):
    """Host-side sampling in `forward` (eager); only the numeric `score` method is compiled."""

    def forward(self, logits: torch.Tensor) -> list[int]:
        return self.score(logits).argmax(-1).tolist()

    def score(self, logits: torch.Tensor, temperature: float = 0.7) -> torch.Tensor:
        return torch.log_softmax(logits / temperature, dim=-1)


class Pipeline(nn.Module):
    """preprocess -> encoder -> head -> sampler, each part a region with its own settings."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.preprocess = Preprocess()
        self.encoder = Encoder(dim)
        self.head = Head(dim)
        self.sampler = Sampler()

    def forward(self, x: torch.Tensor) -> list[int]:
        return self.sampler(self.head(self.encoder(self.preprocess(x))))


def build_pipeline() -> Pipeline:
    """The scenario-1 model (deterministic weights)."""
    torch.manual_seed(0)
    return Pipeline().eval()


def pipeline_inputs(steps: int = 6, dim: int = 32) -> list[torch.Tensor]:
    """Batches of varying sequence length (what makes `dynamic = true` matter for the encoder)."""
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(2, 4 + 3 * i, dim, generator=gen) * 3 for i in range(steps)]


def pipeline_step(model: nn.Module, i: int) -> Any:
    """`step(model, i)` for the contract's probe."""
    with torch.no_grad():
        return model(pipeline_inputs(i + 1)[i])


def build_llama4() -> nn.Module:
    """A 4-layer tiny Llama (scenario 3: granularity matters more with more layers)."""
    return build_llama(layers=4)


@torch.no_grad()
def forward_batch(model: nn.Module, batch: int, seq: int = 16, seed: int = 0) -> torch.Tensor:
    """One full-sequence forward (no cache): the serving step of scenario 3."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (batch, seq), generator=gen)
    return model(input_ids=ids, use_cache=False).logits
