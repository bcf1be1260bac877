"""Binding regions to modules: globs follow module names segment by segment."""

from __future__ import annotations

import pytest
from torch import nn

from contract.binding.resolve import bind, glob_match
from contract.document.load import load


@pytest.mark.parametrize(
    "pattern,name,hit",
    [
        ("model.layers.*", "model.layers.0", True),
        ("model.layers.*", "model.layers.0.mlp", False),
        ("model.**.mlp", "model.layers.0.mlp", True),
        ("model.**.mlp", "model.mlp", True),
        ("**", "", True),
        ("", "", True),
        ("", "layers", False),
        ("layers.1*", "layers.12", True),
        ("*", "", False),
    ],
)
def test_glob_matches_dotted_segments(pattern: str, name: str, hit: bool) -> None:
    assert glob_match(pattern, name) is hit


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Linear(4, 4)

    def forward(self, x):
        return self.mlp(x)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_each_layer_instance_becomes_a_target_of_its_region(write_contract) -> None:
    contract, _ = load(write_contract('[contract]\nname="m"\n[[region]]\nname="l"\nmodule="layers.*"\n'))
    model = Model()
    binding, findings = bind(contract, model)
    assert findings == []
    assert [t.path for t in binding.regions["l"].targets] == ["layers.0", "layers.1", "layers.2"]
    assert binding.region_of(model.layers[1], "forward").region == "l"


def test_unmatched_glob_lists_candidates(write_contract) -> None:
    contract, _ = load(write_contract('[contract]\nname="m"\n[[region]]\nname="l"\nmodule="layer.*"\n'))
    _, findings = bind(contract, Model())
    assert [(f.code, f.location) for f in findings] == [("CC501", "region[0].module")]
    assert "layers.0" in findings[0].fix


class Decoder(nn.Module):
    """A module with its own public methods and a property that raises when read."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    def prefill(self, x):
        return self.lin(x)

    def decode_step(self, x):
        return self.lin(x)

    @property
    def generate(self):
        raise RuntimeError("generation config not loaded")


def test_a_claimed_property_that_raises_is_a_cc503_finding_naming_the_exception(write_contract) -> None:
    contract, _ = load(write_contract('[contract]\nname="m"\n[[region]]\nname="d"\nmodule=""\nmethods=["generate"]\n'))
    binding, findings = bind(contract, Decoder())
    assert [(f.code, f.location) for f in findings] == [("CC503", "region[0].methods")]
    assert "raised RuntimeError: generation config not loaded" in findings[0].message
    assert binding.regions["d"].targets == []


def test_a_missing_method_with_no_close_name_lists_the_modules_own_methods(write_contract) -> None:
    contract, _ = load(write_contract('[contract]\nname="m"\n[[region]]\nname="d"\nmodule=""\nmethods=["zzz"]\n'))
    _, [finding] = bind(contract, Decoder())
    assert finding.code == "CC503"
    assert finding.fix == "use one of its methods: decode_step, forward, prefill"


def test_a_missing_method_close_to_a_real_one_gets_a_did_you_mean(write_contract) -> None:
    contract, _ = load(write_contract('[contract]\nname="m"\n[[region]]\nname="d"\nmodule=""\nmethods=["prefil"]\n'))
    _, [finding] = bind(contract, Decoder())
    assert finding.fix == "did you mean prefill?"
