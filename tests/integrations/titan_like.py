"""torchtitan's per-block compile, reproduced: the real package is not used because torchtitan 0.3.0 (pip) pulls
`datasets<4.8`, which downgrades the huggingface_hub our transformers needs, and its `torchtitan.distributed` imports
`spmd_types`, not installed here. What is reproduced, from the 0.3.0 wheel unless noted:

- `models/llama3/parallelize.py::parallelize_llama` (lines 55-90): activation checkpointing, then `apply_compile`,
  then FSDP2 (`apply_fsdp_to_decoder`), in that order;
- `distributed/activation_checkpoint.py::ActivationCheckpointing.apply` (152-163) with `FullAC._wrap_block`
  (166-182): each child of `model.layers` wrapped by `checkpoint_wrapper(preserve_rng_state=True,
  determinism_check="default", early_stop=False, debug=False)` and re-registered under its name. Left out:
  `_disable_dynamo_lru_cache()` (97-109), a process-wide switch of which cache entry Dynamo tries first; it changes no
  compile count;
- `distributed/compile.py::apply_compile` (39-72), today's form: `capture_scalar_outputs = True` and
  `skip_fwd_side_effects_in_bwd_under_checkpoint = True` (set here for the call only, not for the process), then
  `transformer_block.compile(backend=..., fullgraph=True)` in place for each child of `model.layers`;
- the earlier form (pytorch/torchtitan `torchtitan/models/llama3/infra/parallelize.py::apply_compile`, commit
  018740b7, before torchtitan#2688): `torch.compile(transformer_block, backend=..., fullgraph=...)` re-registered
  into `model.layers`;
- `distributed/fsdp.py::apply_fsdp_to_decoder` (110-310), dense path: `fully_shard` on `tok_embeddings`, on
  `[norm, lm_head]`, on each block of `model.layers`, then on the model.

The model is torchtitan's decoder shape (`models/common/decoder.py`): `tok_embeddings`, `layers` a ModuleDict of
TransformerBlocks keyed "0", "1", ..., `norm`, `lm_head`.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

VOCAB, DIM = 64, 16


class TransformerBlock(nn.Module):
    """Pre-norm attention (single head, causal) and a SwiGLU feed-forward, as torchtitan's dense block."""

    def __init__(self) -> None:
        super().__init__()
        self.attention_norm = nn.RMSNorm(DIM)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))
        self.ffn_norm = nn.RMSNorm(DIM)
        self.w1, self.w3 = nn.Linear(DIM, 2 * DIM, bias=False), nn.Linear(DIM, 2 * DIM, bias=False)
        self.w2 = nn.Linear(2 * DIM, DIM, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.attention_norm(x)
        a = nn.functional.scaled_dot_product_attention(self.wq(h), self.wk(h), self.wv(h), is_causal=True)
        x = x + self.wo(a)
        h = self.ffn_norm(x)
        return x + self.w2(nn.functional.silu(self.w1(h)) * self.w3(h))


class Decoder(nn.Module):
    """torchtitan's decoder layout with two blocks."""

    def __init__(self, n_layers: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleDict({str(i): TransformerBlock() for i in range(n_layers)})
        self.norm = nn.RMSNorm(DIM)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h)
        return self.lm_head(self.norm(h))


def apply_ac(model: Decoder) -> None:
    """FullAC: every block wrapped by checkpoint_wrapper and re-registered under its name."""
    layers = model.get_submodule("layers")
    for layer_id, transformer_block in layers.named_children():
        wrapped = checkpoint_wrapper(
            transformer_block, preserve_rng_state=True, determinism_check="default", early_stop=False, debug=False
        )
        layers.register_module(layer_id, wrapped)


def apply_compile(model: Decoder, backend: str, *, form: str, skip: tuple[str, ...] = ()) -> None:
    """`form="inplace"`: today's `block.compile(backend=, fullgraph=True)`; `form="wrapped"`: the earlier
    `torch.compile(block)` re-registered. `skip` leaves those block names uncompiled (a test's engine bug)."""
    flags = {"capture_scalar_outputs": True, "skip_fwd_side_effects_in_bwd_under_checkpoint": True}
    known = {k: v for k, v in flags.items() if hasattr(torch._dynamo.config, k)}  # the second is newer than 2.11
    with torch._dynamo.config.patch(known):
        for layer_id, transformer_block in model.layers.named_children():
            if layer_id in skip:
                continue
            if form == "inplace":
                transformer_block.compile(backend=backend, fullgraph=True)
            else:
                model.layers.register_module(
                    layer_id, torch.compile(transformer_block, backend=backend, fullgraph=True)
                )


def apply_fsdp(model: Decoder, mesh: object) -> None:
    """apply_fsdp_to_decoder's dense path (no mixed precision: CPU float32)."""
    from torch.distributed.fsdp import fully_shard

    fully_shard(model.tok_embeddings, mesh=mesh)
    fully_shard([model.norm, model.lm_head], mesh=mesh, reshard_after_forward=False)
    for transformer_block in model.layers.values():
        fully_shard(transformer_block, mesh=mesh)
    fully_shard(model, mesh=mesh)
