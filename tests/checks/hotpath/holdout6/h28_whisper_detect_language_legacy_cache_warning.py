"""Hazard: the ASR pipeline's Whisper model has its `forward` compiled, and `detect_language` calls it with the
config's default `use_cache=True` and no cache; the decoder then takes the legacy-cache branch, which calls
`logger.warning_once(...)` and builds an `EncoderDecoderCache` inside the compiled frame, so every compile
graph-breaks at the logger call (at the time of the report Dynamo crashed in that branch instead). From
huggingface/transformers#35413 (Fix whisper compile: no cache is needed there, and it avoids the log warning)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import EncoderDecoderCache, get_logger

logger = get_logger("transformers.models.whisper.modeling_whisper")

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/transformers/pull/35413"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class WhisperConfig:
    d_model = 8
    num_mel_bins = 8
    vocab_size = 32
    decoder_layers = 2
    max_target_positions = 16
    use_cache = True
    decoder_start_token_id = 1
    lang_ids = (5, 6, 7)


class WhisperDecoderLayer(nn.Module):
    def __init__(self, config: WhisperConfig, layer_idx: int) -> None:
        super().__init__()
        d = config.d_model
        self.layer_idx = layer_idx
        self.self_attn = nn.ModuleDict({n: nn.Linear(d, d) for n in ("q_proj", "k_proj", "v_proj", "out_proj")})
        self.encoder_attn = nn.ModuleDict({n: nn.Linear(d, d) for n in ("q_proj", "k_proj", "v_proj", "out_proj")})
        self.fc1, self.fc2 = nn.Linear(d, 16), nn.Linear(16, d)
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(3)])

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor,
                past_key_value: EncoderDecoderCache | None = None) -> torch.Tensor:
        h = self.norms[0](hidden_states)
        q, k, v = (self.self_attn[n](h) for n in ("q_proj", "k_proj", "v_proj"))
        if past_key_value is not None:
            k, v = past_key_value.self_attention_cache.update(k, v, self.layer_idx)
        hidden_states = hidden_states + self.self_attn["out_proj"](F.scaled_dot_product_attention(q, k, v))
        h = self.norms[1](hidden_states)
        q = self.encoder_attn["q_proj"](h)
        ck, cv = self.encoder_attn["k_proj"](encoder_hidden_states), self.encoder_attn["v_proj"](encoder_hidden_states)
        if past_key_value is not None:
            ck, cv = past_key_value.cross_attention_cache.update(ck, cv, self.layer_idx)
        hidden_states = hidden_states + self.encoder_attn["out_proj"](F.scaled_dot_product_attention(q, ck, cv))
        return hidden_states + self.fc2(F.gelu(self.fc1(self.norms[2](hidden_states))))


class WhisperDecoder(nn.Module):
    def __init__(self, config: WhisperConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model)
        self.embed_positions = nn.Embedding(config.max_target_positions, config.d_model)
        self.layers = nn.ModuleList([WhisperDecoderLayer(config, i) for i in range(config.decoder_layers)])
        self.layer_norm = nn.LayerNorm(config.d_model)

    def forward(self, input_ids: torch.Tensor, encoder_hidden_states: torch.Tensor,
                past_key_values: EncoderDecoderCache | None = None, use_cache: bool | None = None) -> torch.Tensor:
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if use_cache or past_key_values is not None:
            if not isinstance(past_key_values, EncoderDecoderCache):
                logger.warning_once(
                    "Passing a tuple of `past_key_values` as an input is deprecated and will be removed in Transformers "
                    "v4.43.0. You should pass an instance of `EncoderDecoderCache` instead, e.g. "
                    "`past_key_values=EncoderDecoderCache.from_legacy_cache(past_key_values)`."
                )
                past_key_values = EncoderDecoderCache.from_legacy_cache(past_key_values)
        positions = torch.arange(input_ids.shape[1])
        hidden_states = self.embed_tokens(input_ids) + self.embed_positions(positions)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, encoder_hidden_states, past_key_value=past_key_values)
        return self.layer_norm(hidden_states)


class WhisperForConditionalGeneration(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = WhisperConfig()
        self.encoder = nn.Sequential(nn.Linear(self.config.num_mel_bins, self.config.d_model), nn.GELU())
        self.decoder = WhisperDecoder(self.config)
        self.proj_out = nn.Linear(self.config.d_model, self.config.vocab_size, bias=False)

    def forward(self, input_features: torch.Tensor, decoder_input_ids: torch.Tensor,
                use_cache: bool | None = None) -> torch.Tensor:
        encoder_hidden_states = self.encoder(input_features.transpose(1, 2))
        hidden = self.decoder(decoder_input_ids, encoder_hidden_states, use_cache=use_cache)
        return self.proj_out(hidden)


def detect_language(model: nn.Module, input_features: torch.Tensor) -> torch.Tensor:
    """WhisperGenerationMixin.detect_language (before the fix): one decoder step from <|startoftranscript|>."""
    decoder_input_ids = torch.full((input_features.shape[0], 1), model.config.decoder_start_token_id)
    with torch.no_grad():
        logits = model(input_features, decoder_input_ids=decoder_input_ids)[:, -1]
    lang_ids = torch.tensor(model.config.lang_ids)
    return lang_ids[logits[:, lang_ids].argmax(-1)]


def build() -> nn.Module:
    return WhisperForConditionalGeneration()


def step(model: nn.Module, i: int) -> None:
    input_features = torch.randn(2, 8, 6)  # one batch of 30 s log-mel chunks
    detect_language(model, input_features)
