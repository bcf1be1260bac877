"""CC1xx: compile settings validated up front, the way `torch.compile` validates them, against the installed torch."""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from contract import _torch
from contract.checks import CheckContext
from contract.checks.settings import check as cc1xx
from contract.document.load import load
from contract.pipeline import check
from tests import ROOT as ROOT_DIR
from tests.report.test_catalog import EXAMPLES

HEAD = '[contract]\nname = "s"\n'


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def settings(write_contract, region: str, extra: str = "") -> list:
    """CC1xx findings for a contract with one region over `layers.*` (plus optional extra tables)."""
    path = write_contract(f'{HEAD}{extra}\n[[region]]\nname = "layers"\nmodule = "layers.*"\n{region}\n')
    contract, findings = load(path)
    assert contract is not None and not findings, findings
    return cc1xx.check(CheckContext(contract=contract))


def pairs(findings) -> list[tuple[str, str]]:
    return [(f.code, f.location) for f in findings]


def test_healthy_demo_contract_has_no_settings_findings() -> None:
    contract, _ = load(ROOT_DIR / "contracts" / "demo.toml")
    assert cc1xx.check(CheckContext(contract=contract)) == []


@pytest.mark.parametrize(
    "region, code, key",
    [
        ('backend = "inductr"', "CC101", "backend"),
        ('mode = "reduce_overhead"', "CC102", "mode"),
        ("options = { max_autotun = true }", "CC103", "options.max_autotun"),
        ('options = { max_autotune = "true" }', "CC104", "options.max_autotune"),
        ('mode = "max-autotune"\noptions = { max_autotune = true }', "CC105", "mode"),
    ],
)
def test_settings_torch_compile_rejects_are_errors_and_torch_agrees(write_contract, region, code, key) -> None:
    found = settings(write_contract, region)
    assert pairs(found) == [(code, f"region[0].{key}")] and found[0].severity == "error"
    contract, _ = load(write_contract(f'{HEAD}[[region]]\nname = "l"\nmodule = "layers.*"\n{region}\n', "again.toml"))
    with pytest.raises(Exception):  # noqa: B017 - torch raises a different type per setting; any refusal agrees
        torch.compile(Block(), **contract.regions[0].compile_kwargs())


def test_valid_inductor_settings_pass_and_torch_compile_accepts_them(write_contract) -> None:
    region = 'options = { max_autotune = false, compile_threads = 1, "triton.cudagraphs" = false }\nfullgraph = true'
    assert settings(write_contract, region) == []
    contract, _ = load(write_contract(f'{HEAD}[[region]]\nname = "l"\nmodule = "layers.*"\n{region}\n', "ok.toml"))
    torch.compile(Block(), **contract.regions[0].compile_kwargs())


def test_each_valid_mode_of_this_torch_passes(write_contract) -> None:
    for mode in _torch.inductor_modes():
        assert [f for f in settings(write_contract, f'mode = "{mode}"') if f.code == "CC102"] == []


def test_unknown_backend_suggests_the_closest_name(write_contract) -> None:
    [f] = settings(write_contract, 'backend = "aot_eagr"')
    assert "'aot_eager'" in f.fix


def test_a_custom_backend_registered_before_the_check_is_known(write_contract) -> None:
    from torch._dynamo import register_backend

    @register_backend(name="contract_test_backend")
    def contract_test_backend(gm, example_inputs):
        return gm.forward

    assert settings(write_contract, 'backend = "contract_test_backend"') == []
    compiled = torch.compile(Block(), backend="contract_test_backend")
    compiled(torch.ones(2, 4))


def test_a_bad_default_is_reported_once_at_its_defaults_key(write_contract) -> None:
    path = write_contract(
        f'{HEAD}[defaults]\nmode = "fast"\n[[region]]\nname = "a"\nmodule = "layers.0"\n'
        '[[region]]\nname = "b"\nmodule = "layers.1"\n'
    )
    contract, _ = load(path)
    assert pairs(cc1xx.check(CheckContext(contract=contract))) == [("CC102", "defaults.mode")]


def test_mode_and_options_on_a_backend_that_drops_them_warn(write_contract) -> None:
    found = settings(write_contract, 'backend = "eager"\nmode = "max-autotune"')
    assert pairs(found) == [("CC106", "region[0].mode")] and found[0].severity == "warning"


def test_the_eager_backend_without_mode_or_options_is_silent(write_contract) -> None:
    assert settings(write_contract, 'backend = "eager"') == []


@pytest.mark.parametrize(
    "region, key",
    [
        ('mode = "reduce-overhead"\ndynamic = true', "dynamic"),
        ('options = { "triton.cudagraphs" = true }\ndynamic_dims = { x = [0] }', "dynamic_dims"),
    ],
)
def test_cuda_graphs_with_dynamic_shapes_warn(write_contract, region, key) -> None:
    found = settings(write_contract, region)
    assert pairs(found) == [("CC107", f"region[0].{key}")] and found[0].severity == "warning"


def test_cuda_graphs_with_static_shapes_are_silent(write_contract) -> None:
    assert settings(write_contract, 'mode = "reduce-overhead"\ndynamic = false') == []


def test_fullgraph_with_a_graph_break_budget_is_an_error(write_contract) -> None:
    assert pairs(settings(write_contract, "fullgraph = true\ngraph_break_budget = 2")) == [
        ("CC108", "region[0].graph_break_budget")
    ]


def test_fullgraph_with_a_zero_budget_is_silent(write_contract) -> None:
    assert settings(write_contract, "fullgraph = true\ngraph_break_budget = 0") == []


def test_an_unmet_torch_requirement_is_an_error(write_contract) -> None:
    contract, _ = load(write_contract(f'{HEAD}torch = ">=9.0"\n'))
    found = cc1xx.check(CheckContext(contract=contract))
    assert pairs(found) == [("CC109", "contract.torch")] and torch.__version__.split("+")[0] in found[0].message


@pytest.mark.parametrize("installed", ["2.13.0+cu126", "2.14.0.dev20250101+cpu", "2.11.0"])
def test_local_tags_and_nightlies_satisfy_a_floor(write_contract, installed) -> None:
    contract, _ = load(write_contract(f'{HEAD}torch = ">=2.11"\n'))
    assert cc1xx.check_torch_version(CheckContext(contract=contract), installed=installed) == []


def test_a_version_below_the_floor_is_reported_with_its_local_tag(write_contract) -> None:
    contract, _ = load(write_contract(f'{HEAD}torch = ">=2.12"\n'))
    [f] = cc1xx.check_torch_version(CheckContext(contract=contract), installed="2.11.0+cu126")
    assert f.code == "CC109" and "2.11.0+cu126" in f.message


def test_recompile_limit_needs_torch_2_12_and_names_the_version() -> None:
    contract, _ = load(EXAMPLES / "CC110_needs_newer_torch.toml")
    found = cc1xx.check(CheckContext(contract=contract))
    if _torch.supports_compile_kwarg("recompile_limit"):
        assert found == []
        torch.compile(Block(), backend="eager", recompile_limit=4)
    else:
        assert pairs(found) == [("CC110", "region[0].recompile_limit")] and "torch >= 2.12" in found[0].message
        with pytest.raises(TypeError):
            torch.compile(Block(), backend="eager", recompile_limit=4)


def test_a_region_kept_eager_needs_a_reason(write_contract) -> None:
    assert pairs(settings(write_contract, "enabled = false")) == [("CC111", "region[0].reason")]
    assert settings(write_contract, 'enabled = false\nreason = "issue #12: router counters"\nmode = "bogus"') == []


def test_check_refuses_every_settings_error_before_compiling(write_contract) -> None:
    path = write_contract(
        f'{HEAD}[[region]]\nname = "layers"\nmodule = "layers.*"\nbackend = "inductr"\n'
        '[[region]]\nname = "x"\nmodule = "layers.0.lin"\nenabled = false\n'
    )
    model = Net()
    from contract.pipeline import ContractViolation, enforce

    with pytest.raises(ContractViolation) as exc:
        enforce(model, path)
    assert {f.code for f in exc.value.findings} >= {"CC101", "CC111"}
    assert _torch.forward_call(model.layers[0]) is None
    assert re.search(r"region\[0\]\.backend: CC101", str(exc.value))


def test_a_healthy_contract_checks_clean_and_compiles_with_the_eager_backend(write_contract) -> None:
    path = write_contract(
        f'{HEAD}torch = ">=2.11"\n[[region]]\nname = "layers"\nmodule = "layers.*"\nbackend = "eager"\n'
        "dynamic = false\n"
    )
    import copy

    from contract.pipeline import enforce

    model = Net()
    reference = copy.deepcopy(model)
    _, _, findings = check(path, model)
    assert findings == []
    enforce(model, path)
    assert _torch.forward_call(model.layers[0]) is not None
    assert torch.equal(model(torch.ones(2, 4)), reference(torch.ones(2, 4)))


def test_an_option_written_as_dotted_keys_is_reported_with_the_quoted_form_to_write(write_contract) -> None:
    [f] = settings(write_contract, "options.triton.cudagraphs = true")
    assert (f.code, f.location) == ("CC103", "region[0].options.triton")
    assert f.fix == 'write options = { "triton.cudagraphs" = true } (quote keys that contain dots)'
    contract, _ = load(
        write_contract(
            f'{HEAD}[[region]]\nname = "l"\nmodule = "layers.*"\noptions = {{ "triton.cudagraphs" = true }}\n',
            "fixed.toml",
        )
    )
    assert [x for x in cc1xx.check(CheckContext(contract=contract)) if x.code in ("CC103", "CC104")] == []


def test_a_dotted_option_name_is_quoted_in_its_location(write_contract) -> None:
    assert pairs(settings(write_contract, 'options = { "triton.cudagraphs" = 1 }')) == [
        ("CC104", 'region[0].options."triton.cudagraphs"')
    ]


@pytest.mark.parametrize("option", ["_fuse_ddp_bucket_siz", "zzzz_qqqq"])
def test_unknown_option_suggestions_never_name_private_options(write_contract, option) -> None:
    assert any(n.startswith("_") for n in _torch.inductor_option_types())  # torch does list private names
    [f] = settings(write_contract, f"options = {{ {option} = 1 }}")
    assert f.code == "CC103"
    assert not re.search(r"(^|[ '])_", f.fix.split("use", 1)[-1]), f.fix
