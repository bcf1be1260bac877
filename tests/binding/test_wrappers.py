"""A region glob names the user's model whatever wraps it: torch.compile's wrapper is transparent, an
activation-checkpoint wrapper stands for the block it wraps, DDP's `module.` is seen through (DDP and FSDP2 in a real
job: tests/distributed/test_wrappers.py)."""

from __future__ import annotations

import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

from contract.binding.resolve import bind, claimable_modules
from contract.document.load import load
from tests.distributed.worker import Decoder

CONTRACT = '[contract]\nname = "c"\n[[region]]\nname = "blocks"\nmodule = "{glob}"\nbackend = "eager"\n'


def bound_paths(write_contract, model: nn.Module, glob: str) -> list[str]:
    contract, _ = load(write_contract(CONTRACT.format(glob=glob)))
    binding, findings = bind(contract, model)
    assert not [f for f in findings if f.severity == "error"], findings
    return [t.path for t in binding.regions["blocks"].targets]


def test_a_model_wrapped_by_torch_compile_binds_by_the_models_own_names(write_contract):
    model = Decoder()
    compiled = torch.compile(model, backend="eager")
    assert bound_paths(write_contract, compiled, "layers.*") == ["layers.0", "layers.1"]
    claimed = claimable_modules(compiled)
    assert [m for path, _, m in claimed if path == ""] == [model]  # the wrapper itself is never claimed
    assert all(raw.startswith("_orig_mod") for path, raw, _ in claimed if path)


def test_checkpoint_wrapped_blocks_are_claimed_as_the_wrapper_by_the_blocks_names(write_contract):
    model = Decoder()
    for i, block in enumerate(model.layers):
        model.layers[i] = checkpoint_wrapper(block)
    paths = bound_paths(write_contract, model, "layers.*")
    assert paths == ["layers.0", "layers.1"]
    claimed = {p: m for p, raw, m in claimable_modules(model)}
    assert type(claimed["layers.0"]).__name__ == "CheckpointWrapper" and "layers.0.attn" in claimed
    assert bound_paths(write_contract, model, "layers.*.mlp") == ["layers.0.mlp", "layers.1.mlp"]


def test_a_raw_name_through_a_wrapper_still_binds(write_contract):
    model = Decoder()
    model.layers[0] = checkpoint_wrapper(model.layers[0])
    assert bound_paths(write_contract, model, "layers.0._checkpoint_wrapped_module.attn") == ["layers.0.attn"]
