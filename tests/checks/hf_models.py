"""Tiny Hugging Face models (random weights, no downloads) and a step, for the zero-findings test: dense decoders,
MoE (routed experts, shared experts), latent attention (MLA) and parallel-attention blocks."""

from __future__ import annotations

import torch

VOCAB = 128


def _small(**extra):
    return {
        "vocab_size": VOCAB,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
        **extra,
    }


def _build(cls_name: str, config_name: str, **config):
    import transformers as T

    torch.manual_seed(0)
    config = {"bos_token_id": 1, "eos_token_id": 2, **config}  # inside the tiny vocabulary
    return getattr(T, cls_name)(getattr(T, config_name)(**config)).eval()


def llama():
    return _build("LlamaForCausalLM", "LlamaConfig", **_small())


def qwen2():
    return _build("Qwen2ForCausalLM", "Qwen2Config", **_small())


def mistral():
    return _build("MistralForCausalLM", "MistralConfig", **_small(sliding_window=8))


def gemma():
    return _build("GemmaForCausalLM", "GemmaConfig", **_small(head_dim=8))


def phi3():
    return _build("Phi3ForCausalLM", "Phi3Config", **_small(pad_token_id=0))


def mixtral():
    return _build("MixtralForCausalLM", "MixtralConfig", **_small(num_local_experts=4, num_experts_per_tok=2))


def qwen2_moe():
    """MoE with a gated shared expert next to the routed ones."""
    return _build(
        "Qwen2MoeForCausalLM",
        "Qwen2MoeConfig",
        **_small(
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            shared_expert_intermediate_size=32,
            decoder_sparse_step=1,
        ),
    )


def deepseek_v3():
    """Multi-head latent attention (low-rank q/kv projections) and an MoE with shared experts after a dense layer."""
    return _build(
        "DeepseekV3ForCausalLM",
        "DeepseekV3Config",
        **_small(
            num_key_value_heads=4,
            q_lora_rank=16,
            kv_lora_rank=16,
            qk_rope_head_dim=8,
            qk_nope_head_dim=8,
            v_head_dim=8,
            n_routed_experts=4,
            n_shared_experts=1,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            first_k_dense_replace=1,
            n_group=1,
            topk_group=1,
        ),
    )


def gpt2():
    import transformers as T

    torch.manual_seed(0)
    config = T.GPT2Config(
        vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=1, eos_token_id=2
    )
    return T.GPT2LMHeadModel(config).eval()


def gpt_neox():
    """Parallel attention and MLP in one residual step (`use_parallel_residual`)."""
    return _build(
        "GPTNeoXForCausalLM",
        "GPTNeoXConfig",
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=64,
        use_parallel_residual=True,
    )


def falcon():
    """Parallel attention with multi-query attention (Falcon-7B's block)."""
    return _build(
        "FalconForCausalLM",
        "FalconConfig",
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        parallel_attn=True,
        multi_query=True,
        new_decoder_architecture=False,
        alibi=False,
    )


def phi():
    """Phi-2's parallel block: attention and MLP read the same normed input."""
    return _build("PhiForCausalLM", "PhiConfig", **_small(num_key_value_heads=4))


LAYERS = {
    "llama": "model.layers.*",
    "qwen2": "model.layers.*",
    "mistral": "model.layers.*",
    "gemma": "model.layers.*",
    "phi3": "model.layers.*",
    "mixtral": "model.layers.*",
    "qwen2_moe": "model.layers.*",
    "deepseek_v3": "model.layers.*",
    "gpt2": "transformer.h.*",
    "gpt_neox": "gpt_neox.layers.*",
    "falcon": "transformer.h.*",
    "phi": "model.layers.*",
}
"""Each architecture's decoder-layer glob (per-layer regions); `""` compiles the model whole."""


def step(model, i: int):
    """One forward of a fixed-shape batch, no cache (prefill-style inference)."""
    gen = torch.Generator().manual_seed(i)
    tokens = torch.randint(0, VOCAB, (2, 16), generator=gen)
    with torch.no_grad():
        return model(input_ids=tokens, use_cache=False).logits
