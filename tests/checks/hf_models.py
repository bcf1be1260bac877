"""Tiny Hugging Face models (random weights, no downloads) and a step, for the zero-findings test."""

from __future__ import annotations

import torch

VOCAB = 128


def _small(**extra):
    return dict(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        **extra,
    )


def llama():
    import transformers as T

    torch.manual_seed(0)
    return T.LlamaForCausalLM(T.LlamaConfig(**_small())).eval()


def qwen2():
    import transformers as T

    torch.manual_seed(0)
    return T.Qwen2ForCausalLM(T.Qwen2Config(**_small())).eval()


def mixtral():
    import transformers as T

    torch.manual_seed(0)
    return T.MixtralForCausalLM(T.MixtralConfig(**_small(num_local_experts=4, num_experts_per_tok=2))).eval()


def gpt2():
    import transformers as T

    torch.manual_seed(0)
    return T.GPT2LMHeadModel(T.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64)).eval()


def step(model, i: int):
    """One forward of a fixed-shape batch, no cache (prefill-style inference)."""
    gen = torch.Generator().manual_seed(i)
    tokens = torch.randint(0, VOCAB, (2, 16), generator=gen)
    with torch.no_grad():
        return model(input_ids=tokens, use_cache=False).logits
