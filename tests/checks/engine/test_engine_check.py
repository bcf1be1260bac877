"""Compiles the engine made before `enforce` are read back from torch's own objects and held against the contract."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import contract
from contract.pipeline import check

CONTRACT = """
[contract]
name = "m"

[defaults]
backend = "eager"

[[region]]
name = "layers"
module = "layers.*"
{extra}
"""


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Model(nn.Module):
    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(n))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def run_check(write_contract, model, extra: str = ""):
    _, _, findings = check(write_contract(CONTRACT.format(extra=extra)), model)
    return findings


def test_whole_model_compiled_outside_the_regions_is_an_error_naming_the_outer_compile(write_contract):
    """`enforce(torch.compile(model))` with a per-layer region refuses: the outer compile inlines every layer."""
    findings = run_check(write_contract, torch.compile(Model(), backend="eager"))
    (inlined,) = [f for f in findings if f.code == "CC903"]
    assert inlined.severity == "error" and inlined.location == "region[0].module"
    assert "<root>.forward" in inlined.message and "torch.compile(Model)" in inlined.message
    assert 'module = ""' in inlined.fix


def test_a_compiled_parent_inlines_the_regions_under_it(write_contract):
    """`model.compile()` on the root (no wrapper object) inlines the layer regions too."""
    model = Model()
    model.compile(backend="eager")
    assert "CC903" in codes(run_check(write_contract, model))


def test_layers_the_engine_compiled_are_an_error_for_a_contract_region(write_contract):
    """A region the contract would compile again over the engine's `block.compile()` is CC904."""
    model = Model()
    for block in model.layers:
        block.compile(backend="eager")
    findings = run_check(write_contract, model)
    (twice,) = [f for f in findings if f.code == "CC904"]
    assert "layers.0.forward (Block.compile()) and 2 more" in twice.message


def test_engine_region_compiled_as_the_contract_says_passes_and_enforce_compiles_nothing(write_contract):
    """torchtitan's in-place `block.compile(backend, fullgraph=True)` verified: no finding, the engine's compile kept."""
    model = Model()
    for block in model.layers:
        block.compile(backend="eager", fullgraph=True)
    before = [b._compiled_call_impl for b in model.layers]
    path = write_contract(CONTRACT.format(extra='compiled_by = "engine"\nfullgraph = true'))
    binding = contract.enforce(model, path)
    assert [b._compiled_call_impl for b in model.layers] == before
    assert binding.regions["layers"].state == "engine"
    assert all(t.engine is not None and t.engine.kind == "compile" for t in binding.regions["layers"].targets)


def test_wrappers_registered_back_into_the_layers_are_verified_per_block(write_contract):
    """The earlier torchtitan form, `torch.compile(block)` put back into `model.layers`, is read through the wrapper."""
    model = Model()
    for i, block in enumerate(model.layers):
        model.layers.register_module(str(i), torch.compile(block, backend="eager", fullgraph=True))
    assert run_check(write_contract, model, 'compiled_by = "engine"\nfullgraph = true') == []
    (differ,) = [f for f in run_check(write_contract, model, 'compiled_by = "engine"') if f.code == "CC902"]
    assert "fullgraph False (contract) vs True (engine)" in differ.message
    assert "layers.0.forward and 2 more" in differ.message


def test_a_layer_the_engine_left_eager_is_not_compiled(write_contract):
    """One block the engine skipped is CC901, naming it."""
    model = Model()
    model.layers[0].compile(backend="eager")
    model.layers[2].compile(backend="eager")
    (missing,) = [f for f in run_check(write_contract, model, 'compiled_by = "engine"') if f.code == "CC901"]
    assert missing.severity == "error" and "layers.1.forward" in missing.message and "more" not in missing.message


def test_a_lazy_engine_region_is_not_required_to_be_compiled_at_start(write_contract):
    """`verify_at = "first_compile"`: nothing compiled yet is no finding."""
    model = Model()
    assert run_check(write_contract, model, 'compiled_by = "engine"\nverify_at = "first_compile"') == []


@pytest.mark.parametrize(
    ("contract_keys", "clean"),
    [
        ('mode = "max-autotune-no-cudagraphs"', True),
        ("options = { max_autotune = true, coordinate_descent_tuning = true }", True),
        ("", False),
        ('mode = "max-autotune"', False),
    ],
)
def test_an_inductor_mode_is_compared_by_its_expansion(write_contract, contract_keys, clean):
    """torch keeps a mode only expanded into options: the contract's mode or the same options both match it."""
    model = Model()
    for block in model.layers:
        block.compile(mode="max-autotune-no-cudagraphs")  # Inductor: compiles nothing until called
    extra = f'compiled_by = "engine"\nbackend = "inductor"\n{contract_keys}'
    found = codes(run_check(write_contract, model, extra))
    assert found == ([] if clean else ["CC902"])


def test_a_compiled_method_attribute_is_an_engine_compile(write_contract):
    """Lightning re-wraps step methods as instance attributes: `model.step = torch.compile(model.step)` verifies."""

    class Steps(Model):
        def step(self, x):
            return self(x).sum()

    model = Steps()
    model.step = torch.compile(model.step, backend="eager")
    text = CONTRACT.replace('module = "layers.*"', 'module = ""\nmethods = ["step"]\ncompiled_by = "engine"')
    _, _, findings = check(write_contract(text.format(extra="")), model)
    assert findings == []


def test_disabled_modules_are_not_engine_compiles(write_contract):
    """`torch.compiler.disable` wraps the same way but compiles nothing: not a compile, not an outer compile."""
    model = Model()
    model.forward = torch.compiler.disable(model.forward)
    assert run_check(write_contract, model) == []
