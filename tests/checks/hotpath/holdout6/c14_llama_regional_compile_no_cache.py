"""Clean: the same per-layer compiled Llama, but the trainer's policy forward passes `use_cache=False` (no KV cache
is wanted when scoring a rollout), so no attention reads `self.layer_idx` and the ten layers, which share one code
object, all hit the one compiled entry. Look-alike of the hazard in huggingface/transformers#36484 (layer_idx guard
with per-layer compile)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import DynamicCache

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/issues/36484"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "model.layers.*"


class LlamaConfig:
    hidden_size = 8
    num_attention_heads = 2
    num_hidden_layers = 10
    vocab_size = 16
    use_cache = True


class LlamaAttention(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.num_heads = config.num_attention_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states: torch.Tensor, past_key_value: DynamicCache | None = None) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.shape
        shape = (bsz, q_len, self.num_heads, self.head_dim)
        query_states = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        if past_key_value is not None:
            key_states, value_states = past_key_value.update(key_states, value_states, self.layer_idx, {})
        attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True,
                                                     scale=self.scaling)
        return self.o_proj(attn_output.transpose(1, 2).reshape(bsz, q_len, -1))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config: LlamaConfig, layer_idx: int) -> None:
        super().__init__()
        self.self_attn = LlamaAttention(config, layer_idx)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, 16), nn.SiLU(), nn.Linear(16, config.hidden_size))
        self.input_layernorm = nn.RMSNorm(config.hidden_size)
        self.post_attention_layernorm = nn.RMSNorm(config.hidden_size)

    def forward(self, hidden_states: torch.Tensor, past_key_value: DynamicCache | None = None) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), past_key_value=past_key_value)
        hidden_states = residual + hidden_states
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaModel(nn.Module):
    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(config, i) for i in range(config.num_hidden_layers)])
        self.norm = nn.RMSNorm(config.hidden_size)

    def forward(self, input_ids: torch.Tensor, use_cache: bool | None = None) -> torch.Tensor:
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        past_key_values = DynamicCache() if use_cache else None
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, past_key_value=past_key_values)
        return self.norm(hidden_states)


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = LlamaConfig()
        self.model = LlamaModel(self.config)
        self.lm_head = nn.Linear(self.config.hidden_size, self.config.vocab_size, bias=False)

    def forward(self, input_ids: torch.Tensor, use_cache: bool | None = None) -> torch.Tensor:
        return self.lm_head(self.model(input_ids, use_cache=use_cache))


def build() -> nn.Module:
    return LlamaForCausalLM()


def step(model: nn.Module, i: int) -> None:
    input_ids = torch.randint(0, 16, (2, 6))
    logits = model(input_ids, use_cache=False)  # scoring a rollout: no KV cache
    logprobs = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, input_ids[:, 1:, None])
    (-logprobs.mean()).backward()
