"""The config of a Hugging Face model's twin: the model's own config (its config class, every key it sets) with the
depth and widths made small and its per-layer quirks kept.

Depth: one layer of each kind the model has (a kind is the set of module kinds a decoder layer holds, by class and
flags: a dense and an MoE layer, a sliding-window and a full-attention layer differ), at least `LAYERS`. The per-layer
config follows the layers picked: `layer_types` and other per-layer lists are cut to them, index lists
(`mlp_only_layers`, `moe_layers`) and counts (`first_k_dense_replace`) renumbered, a sparse step
(`decoder_sparse_step`) turned into the equivalent `mlp_only_layers`.

Widths: 4 attention heads of 16 (hidden 64; key/value heads 4, 2 or 1 as the model has as many, fewer or one),
feed-forward 128, experts 32 wide, at most 8 experts with the top-k and the expert groups scaled to fit, latent
attention ranks 32 (query rank kept absent when the model has none), linear-attention heads 16 wide. Everything else
(vocabulary, positions, sliding window sizes, rope, biases, norms, activations, flags) is the model's.
"""

from __future__ import annotations

from typing import Any

from torch import nn

LAYERS = 2
HEADS, HEAD_DIM, FFN, MOE_FFN, EXPERTS, RANK = 4, 16, 128, 32, 8, 32
HIDDEN = HEADS * HEAD_DIM

WIDTHS: dict[str, int] = {
    "hidden_size": HIDDEN,
    "num_attention_heads": HEADS,
    "intermediate_size": FFN,
    "intermediate_size_mlp": FFN,
    "ffn_hidden_size": 4 * HIDDEN,
    "n_inner": 4 * HIDDEN,
    "moe_intermediate_size": MOE_FFN,
    "shared_expert_intermediate_size": 2 * MOE_FFN,
    "q_lora_rank": RANK,
    "kv_lora_rank": RANK,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "qk_head_dim": 16,
    "v_head_dim": HEAD_DIM,
    "linear_key_head_dim": HEAD_DIM,
    "linear_value_head_dim": HEAD_DIM,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": HEADS,
}
"""Width keys set when the model's config has them with a value (a `None`, e.g. DeepSeek-V2-Lite's absent query
rank, stays `None`)."""

_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts")
_DROPPED = ("model_type", "transformers_version", "architectures", "_name_or_path")


def base_config(config: Any) -> dict[str, Any]:
    """The keys the model's config sets (what differs from the library's defaults), as plain Python values."""
    return {k: v for k, v in config.to_diff_dict().items() if k not in _DROPPED and not k.startswith("_commit")}


def decoder_layers(model: nn.Module, config: Any) -> tuple[str, nn.ModuleList] | None:
    """(path, list) of the model's decoder layers: the outermost `ModuleList` as long as `num_hidden_layers`."""
    count = getattr(config, "num_hidden_layers", None)
    for path, module in model.named_modules():
        if isinstance(module, nn.ModuleList) and count and len(module) == count:
            return path, module
    return None


def pick_layers(kinds: list[frozenset[str]]) -> list[int]:
    """Indices of the model's layers the twin keeps: the first of each kind, then the next ones up to `LAYERS`."""
    picked = sorted({kinds.index(k) for k in kinds})
    for i in range(len(kinds)):
        if len(picked) >= LAYERS:
            break
        if i not in picked:
            picked = sorted([*picked, i])
    return picked


def overrides(config: Any, picked: list[int]) -> dict[str, Any]:
    """What the twin's config changes in the model's: depth and widths, per-layer keys renumbered."""
    out: dict[str, Any] = {_key(config, "num_hidden_layers"): len(picked)}
    for name, value in WIDTHS.items():
        if _get(config, name) is not None:
            out[_key(config, name)] = value
    out.update(_heads(config))
    out.update(_experts(config))
    out.update(_per_layer(config, picked))
    out.update(_rope(config, out))
    return out


def _key(config: Any, name: str) -> str:
    """The config's own key for a common name (GPT-2 calls `num_hidden_layers` `n_layer`)."""
    return getattr(config, "attribute_map", {}).get(name, name)


def _get(config: Any, name: str) -> Any:
    """The config's own value for a common name; None for a derived one (a property: the twin cannot set it)."""
    return vars(config).get(_key(config, name))


def _heads(config: Any) -> dict[str, Any]:
    """Key/value heads as the model has them (as many as the query heads, fewer, or one) and the head width."""
    heads, out = _get(config, "num_attention_heads"), {}
    for name in ("num_key_value_heads", "num_kv_heads"):
        kv = _get(config, name)
        if isinstance(kv, int) and isinstance(heads, int):
            out[_key(config, name)] = HEADS if kv >= heads else 1 if kv == 1 else 2
    if _get(config, "head_dim") is not None:
        latent = _get(config, "qk_rope_head_dim") is not None  # MLA: head_dim is the rotary part
        out[_key(config, "head_dim")] = WIDTHS["qk_rope_head_dim"] if latent else HEAD_DIM
    return out


def _experts(config: Any) -> dict[str, Any]:
    """At most `EXPERTS` experts; top-k and expert groups scaled so that routing still picks fewer than all."""
    key = next((k for k in _EXPERTS if isinstance(getattr(config, k, None), int) and getattr(config, k) > 0), None)
    if key is None:
        return {}
    experts = min(getattr(config, key), EXPERTS)
    out: dict[str, Any] = {key: experts}
    groups = getattr(config, "n_group", None)
    per_group = experts
    if isinstance(groups, int) and groups > 1:
        twin_groups = max(g for g in range(1, experts // 2 + 1) if experts % g == 0 and g <= groups)
        out["n_group"] = twin_groups
        out["topk_group"] = min(getattr(config, "topk_group", None) or twin_groups, twin_groups)
        per_group = out["topk_group"] * (experts // twin_groups)
    top_k = getattr(config, "num_experts_per_tok", None)
    if isinstance(top_k, int):
        out["num_experts_per_tok"] = max(1, min(top_k, experts // 2, per_group))
    return out


def _per_layer(config: Any, picked: list[int]) -> dict[str, Any]:
    """Per-layer keys for the picked layers: lists cut, index lists and counts renumbered."""
    layers = _get(config, "num_hidden_layers")
    out: dict[str, Any] = {}
    for key, value in vars(config).items():  # per-layer lists: `layer_types`, `no_rope_layers`, ...
        if isinstance(value, list) and len(value) == layers and "layer" in key and key != "mlp_only_layers":
            out[key] = [value[i] for i in picked]
    for key in ("moe_layers",):
        if isinstance(getattr(config, key, None), list):
            out[key] = [j for j, i in enumerate(picked) if i in getattr(config, key)]
    dense = getattr(config, "first_k_dense_replace", None)
    if isinstance(dense, int):
        out["first_k_dense_replace"] = sum(1 for i in picked if i < dense)
    out.update(_sparse_step(config, picked))
    return out


def _sparse_step(config: Any, picked: list[int]) -> dict[str, Any]:
    """Qwen-MoE's `decoder_sparse_step` (every s-th layer is MoE) and `mlp_only_layers` as one list for the twin."""
    step, only = getattr(config, "decoder_sparse_step", None), getattr(config, "mlp_only_layers", None)
    if not isinstance(step, int) and not isinstance(only, list):
        return {}
    only = only or []
    step = step if isinstance(step, int) and step > 0 else 1
    dense = [j for j, i in enumerate(picked) if i in only or (i + 1) % step != 0]
    out: dict[str, Any] = {"mlp_only_layers": dense}
    if isinstance(getattr(config, "decoder_sparse_step", None), int):
        out["decoder_sparse_step"] = 1
    return out


def _rope(config: Any, out: dict[str, Any]) -> dict[str, Any]:
    """Long-rope factor lists (one per rotary frequency) cut to the twin's head width."""
    rope = getattr(config, "rope_parameters", None)
    if not isinstance(rope, dict):
        return {}
    half = int(out.get(_key(config, "head_dim"), HEAD_DIM) * rope.get("partial_rotary_factor", 1.0)) // 2
    lists = {k: v[:half] for k, v in rope.items() if isinstance(v, list) and k.endswith("_factor")}
    return {"rope_parameters": {**rope, **lists}} if lists else {}
