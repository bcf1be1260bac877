"""Hugging Face decoders at their real 7B-70B shapes (the published configs' depth and widths; no weights, nothing
downloaded), for the twin probe: `check` builds them on the meta device and the probe runs the step on the twin
`init` writes. Dense (Llama 3, Mistral, Qwen2.5, Phi-3, Falcon, GPT-NeoX), alternating sliding-window attention
(Gemma 2, Gemma 3, GPT-OSS), MoE (Mixtral, Qwen2-MoE with a shared expert, Qwen3-MoE) and latent attention with a
dense first layer (DeepSeek-V2-Lite)."""

from __future__ import annotations

from typing import Any

from torch import nn

_LLAMA3 = {"vocab_size": 128256, "max_position_embeddings": 8192, "rope_theta": 500000.0, "num_key_value_heads": 8}


def _build(cls_name: str, config_name: str, **config: Any) -> nn.Module:
    import transformers as T

    return getattr(T, cls_name)(getattr(T, config_name)(**config)).eval()


def llama3_8b() -> nn.Module:
    return _build(
        "LlamaForCausalLM", "LlamaConfig", **_LLAMA3, hidden_size=4096, intermediate_size=14336,
        num_hidden_layers=32, num_attention_heads=32,
    )  # fmt: skip


def llama3_70b() -> nn.Module:
    return _build(
        "LlamaForCausalLM", "LlamaConfig", **_LLAMA3, hidden_size=8192, intermediate_size=28672,
        num_hidden_layers=80, num_attention_heads=64,
    )  # fmt: skip


def mistral_7b() -> nn.Module:
    return _build(
        "MistralForCausalLM", "MistralConfig", vocab_size=32000, hidden_size=4096, intermediate_size=14336,
        num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, sliding_window=4096,
        max_position_embeddings=32768,
    )  # fmt: skip


def qwen2_5_7b() -> nn.Module:
    return _build(
        "Qwen2ForCausalLM", "Qwen2Config", vocab_size=152064, hidden_size=3584, intermediate_size=18944,
        num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
    )  # fmt: skip


def phi3_medium() -> nn.Module:
    return _build(
        "Phi3ForCausalLM", "Phi3Config", vocab_size=32064, hidden_size=5120, intermediate_size=17920,
        num_hidden_layers=40, num_attention_heads=40, num_key_value_heads=10, max_position_embeddings=4096,
        pad_token_id=32000,
    )  # fmt: skip


def gemma2_9b() -> nn.Module:
    return _build(
        "Gemma2ForCausalLM", "Gemma2Config", vocab_size=256000, hidden_size=3584, intermediate_size=14336,
        num_hidden_layers=42, num_attention_heads=16, num_key_value_heads=8, head_dim=256, sliding_window=4096,
        query_pre_attn_scalar=256, attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
    )  # fmt: skip


def gemma3_12b() -> nn.Module:
    """Five sliding-window layers to one full-attention layer."""
    return _build(
        "Gemma3ForCausalLM", "Gemma3TextConfig", vocab_size=262208, hidden_size=3840, intermediate_size=15360,
        num_hidden_layers=48, num_attention_heads=16, num_key_value_heads=8, head_dim=256, sliding_window=1024,
        query_pre_attn_scalar=256,
    )  # fmt: skip


def mixtral_8x7b() -> nn.Module:
    return _build(
        "MixtralForCausalLM", "MixtralConfig", vocab_size=32000, hidden_size=4096, intermediate_size=14336,
        num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, num_local_experts=8,
        num_experts_per_tok=2, max_position_embeddings=32768,
    )  # fmt: skip


def qwen2_moe_57b() -> nn.Module:
    """Qwen2-57B-A14B: 64 routed experts and a gated shared expert in every layer."""
    return _build(
        "Qwen2MoeForCausalLM", "Qwen2MoeConfig", vocab_size=151936, hidden_size=3584, intermediate_size=18944,
        num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4, num_experts=64, num_experts_per_tok=8,
        moe_intermediate_size=2560, shared_expert_intermediate_size=20480, max_position_embeddings=32768,
    )  # fmt: skip


def qwen3_moe_30b() -> nn.Module:
    """Qwen3-30B-A3B: 128 experts, top 8, query/key norms."""
    return _build(
        "Qwen3MoeForCausalLM", "Qwen3MoeConfig", vocab_size=151936, hidden_size=2048, intermediate_size=6144,
        num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128, num_experts=128,
        num_experts_per_tok=8, moe_intermediate_size=768, max_position_embeddings=40960,
    )  # fmt: skip


def deepseek_v2_lite() -> nn.Module:
    """DeepSeek-V2-Lite (15.7B): latent attention without a query rank, 64 experts and 2 shared, layer 0 dense."""
    return _build(
        "DeepseekV2ForCausalLM", "DeepseekV2Config", vocab_size=102400, hidden_size=2048, intermediate_size=10944,
        num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16, kv_lora_rank=512, q_lora_rank=None,
        qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, n_routed_experts=64, num_experts_per_tok=6,
        n_shared_experts=2, moe_intermediate_size=1408, first_k_dense_replace=1, max_position_embeddings=163840,
    )  # fmt: skip


def falcon_40b() -> nn.Module:
    """Falcon-40B's new decoder architecture: parallel attention and MLP, 8 key/value groups."""
    return _build(
        "FalconForCausalLM", "FalconConfig", vocab_size=65024, hidden_size=8192, num_hidden_layers=60,
        num_attention_heads=128, num_kv_heads=8, new_decoder_architecture=True, parallel_attn=True, alibi=False,
        bias=False,
    )  # fmt: skip


def gpt_neox_20b() -> nn.Module:
    return _build(
        "GPTNeoXForCausalLM", "GPTNeoXConfig", vocab_size=50432, hidden_size=6144, intermediate_size=24576,
        num_hidden_layers=44, num_attention_heads=64, max_position_embeddings=2048, use_parallel_residual=True,
    )  # fmt: skip


def gpt_oss_20b() -> nn.Module:
    """GPT-OSS-20B: 32 experts, top 4, sliding and full attention alternating, attention sinks."""
    return _build(
        "GptOssForCausalLM", "GptOssConfig", vocab_size=201088, hidden_size=2880, intermediate_size=2880,
        num_hidden_layers=24, num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=32,
        num_experts_per_tok=4, sliding_window=128,
    )  # fmt: skip


SHAPES = {
    "llama3_8b": "Llama-3-8B",
    "llama3_70b": "Llama-3-70B",
    "mistral_7b": "Mistral-7B",
    "qwen2_5_7b": "Qwen2.5-7B",
    "phi3_medium": "Phi-3-medium (14B)",
    "gemma2_9b": "Gemma-2-9B",
    "gemma3_12b": "Gemma-3-12B",
    "mixtral_8x7b": "Mixtral-8x7B",
    "qwen2_moe_57b": "Qwen2-57B-A14B",
    "qwen3_moe_30b": "Qwen3-30B-A3B",
    "deepseek_v2_lite": "DeepSeek-V2-Lite (16B)",
    "falcon_40b": "Falcon-40B",
    "gpt_neox_20b": "GPT-NeoX-20B",
    "gpt_oss_20b": "GPT-OSS-20B",
}
"""Factory name -> the published model whose shape it has."""
