"""Regions proposed from real models' module trees: repeated blocks are one glob each, the rest a few named regions or
left eager with a reason, and the binder finds no method claimed twice or nested."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from contract import demo
from contract.binding.resolve import bind, glob_match
from contract.init.build import build
from contract.init.propose import propose
from examples import scenario5_kernels as kernels
from examples import scenario_models as scenario
from tests.checks import hf_models
from tests.init import models

EXPECTED: dict[str, tuple[Callable[[], nn.Module], dict[str, str], set[str]]] = {
    "demo": (
        demo.build_model,
        {"layers": "layers.*", "lm_head": "lm_head"},
        {"embed", "norm"},
    ),
    "llama": (
        hf_models.llama,
        {"layers": "model.layers.*", "norm": "model.norm", "lm_head": "lm_head"},
        {"model.embed_tokens", "model.rotary_emb"},
    ),
    "mixtral": (
        hf_models.mixtral,
        {"layers": "model.layers.*", "norm": "model.norm", "lm_head": "lm_head"},
        {"model.embed_tokens", "model.rotary_emb"},
    ),
    "gpt2": (
        hf_models.gpt2,
        {"transformer_h": "transformer.h.*", "lm_head": "lm_head"},
        {"transformer.wte", "transformer.wpe", "transformer.drop", "transformer.ln_f"},
    ),
    "pipeline": (scenario.build_pipeline, {"encoder": "encoder", "head": "head"}, {"preprocess", "sampler"}),
    "kernels": (kernels.build_kernel_model, {"blocks": "blocks.*"}, set()),
    "stack": (
        models.build_stack,
        {"encoder_layers": "encoder.layers.*", "decoder_layers": "decoder.layers.*", "proj": "proj"},
        set(),
    ),
    "plain": (models.build_plain, {"plain": ""}, {"conv", "act"}),
}


def on_meta(factory: Callable[[], nn.Module]) -> nn.Module:
    if factory in (hf_models.llama, hf_models.mixtral, hf_models.gpt2):
        pytest.importorskip("transformers")
    with torch.device("meta"):
        return factory()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_regions_are_the_globs_an_engineer_would_write(name: str) -> None:
    factory, regions, left_out = EXPECTED[name]
    proposal = propose(on_meta(factory))
    assert {r.name: r.module for r in proposal.regions} == regions
    assert {lo.path for lo in proposal.left_out} == left_out
    assert all(r.why for r in proposal.regions) and all(lo.why for lo in proposal.left_out)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_module_method_is_claimed_twice_or_nested(name: str, write_contract) -> None:
    from contract.document.load import load

    model = on_meta(EXPECTED[name][0])
    proposal = propose(model)
    body = "".join(f'[[region]]\nname = "{r.name}"\nmodule = "{r.module}"\n' for r in proposal.regions)
    contract, findings = load(write_contract(f'[contract]\nname = "x"\n{body}'))
    assert contract is not None and findings == []
    binding, bound = bind(contract, model)
    assert bound == []
    claimed = [t.path for t in binding.targets()]
    assert len(claimed) == len(set(claimed))


def test_each_block_of_a_stack_is_matched_by_its_glob_and_nothing_else_is() -> None:
    model = on_meta(hf_models.llama)
    layers = next(r for r in propose(model).regions if r.name == "layers")
    matched = [n for n, _ in model.named_modules() if glob_match(layers.module, n)]
    assert matched == ["model.layers.0", "model.layers.1"] == list(layers.paths)


def test_left_out_modules_say_why() -> None:
    proposal = propose(on_meta(hf_models.llama))
    why = {lo.path: lo.why for lo in proposal.left_out}
    assert "one torch.nn kernel (Embedding)" in why["model.embed_tokens"]
    assert "no parameters (LlamaRotaryEmbedding)" in why["model.rotary_emb"]


def test_an_eighty_layer_model_is_proposed_from_the_meta_device_without_allocating() -> None:
    built = build("tests.init.models:build_deep", meta=True)
    assert built.meta and "meta device" in built.note
    assert all(p.device.type == "meta" for p in built.model.parameters())
    (layers,) = [r for r in propose(built.model).regions if r.name == "layers"]
    assert layers.module == "layers.*" and len(layers.paths) == 80


def test_a_factory_that_fails_on_meta_is_built_normally_and_says_so() -> None:
    built = build("tests.init.models:meta_hostile", meta=True)
    assert not built.meta
    assert "built normally" in built.note and "meta device raised" in built.note
    assert all(p.device.type == "cpu" for p in built.model.parameters())
