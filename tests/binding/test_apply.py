"""Applying a contract compiles in place, keeps state_dict keys, and compiles exactly like plain module.compile()."""

from __future__ import annotations

import torch
from torch import nn

from contract.binding.apply import apply, restore, set_eager
from contract.binding.targets import Binding
from contract.pipeline import check

CONTRACT = """
[contract]
name = "m"

[defaults]
backend = "eager"

[[region]]
name = "layers"
module = "layers.*"

[[region]]
name = "head"
module = "head"
methods = ["forward", "decode"]
{extra}
"""


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 2)

    def forward(self, x):
        return self.lin(x)

    def decode(self, x):
        return self.lin(x).softmax(-1)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(Layer() for _ in range(3))
        self.head = Head()

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def applied(write_contract, model: nn.Module, extra: str = "") -> Binding:
    _, binding, findings = check(write_contract(CONTRACT.format(extra=extra)), model)
    assert not [f for f in findings if f.severity == "error"], findings
    return apply(binding)


def frames() -> tuple[int, int]:
    stats = torch._dynamo.utils.counters["stats"]
    return stats["unique_graphs"], torch._dynamo.utils.counters["frames"]["ok"]


def run(model: nn.Module, sizes=(4, 4, 5)) -> list[torch.Tensor]:
    outs = []
    for n in sizes:
        x = torch.randn(n, 8, generator=torch.Generator().manual_seed(n))
        outs.append(model(x))
        outs.append(model.head.decode(x))
    return outs


def test_default_contract_compiles_exactly_like_plain_module_compile(write_contract) -> None:
    plain = Model()
    for m in [*plain.layers, plain.head]:
        m.compile(backend="eager")
    plain.head.decode = torch.compile(plain.head.decode, backend="eager")
    torch._dynamo.utils.counters.clear()
    expected = run(plain)
    plain_counts = frames()
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    model = Model()
    applied(write_contract, model)
    got = run(model)
    assert frames() == plain_counts and plain_counts[0] > 0
    assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True))


def test_apply_keeps_module_type_and_state_dict_keys(write_contract) -> None:
    model = Model()
    keys = list(model.state_dict())
    applied(write_contract, model)
    assert type(model.layers[0]) is Layer and list(model.state_dict()) == keys


def test_a_region_switched_to_eager_runs_uncompiled_and_can_switch_back(write_contract) -> None:
    model = Model()
    binding = applied(write_contract, model)
    run(model, sizes=(4,))
    torch._dynamo.utils.counters.clear()
    set_eager(binding, "layers")
    run(model, sizes=(7,))
    assert torch._dynamo.utils.counters["frames"]["total"] == 2  # head.forward and head.decode only
    restore(binding, "layers")
    assert binding.regions["layers"].state == "compiled"
    set_eager(binding, "head")
    assert "decode" not in model.head.__dict__


def test_region_kept_eager_is_disabled_even_inside_a_compiled_parent(write_contract) -> None:
    extra = '\n[[region]]\nname = "root"\nmodule = ""\n'
    text = CONTRACT.format(extra="").replace(
        'module = "layers.*"', 'module = "layers.*"\nenabled = false\nreason = "custom kernel"'
    )
    model = Model()
    _, binding, findings = check(write_contract(text + extra), model)
    assert [f.code for f in findings] == ["CC504"]
    apply(binding)
    x = torch.randn(4, 8)
    assert torch.allclose(model(x), Model()(x))
    assert binding.regions["layers"].state == "disabled"


def test_dynamic_dims_mark_the_argument_so_new_sizes_do_not_recompile(write_contract) -> None:
    model = Model()
    text = CONTRACT.format(extra="").replace('module = "head"', 'module = "head"\ndynamic_dims = { x = [0] }')
    _, binding, _ = check(write_contract(text), model)
    apply(binding)
    torch._dynamo.utils.counters.clear()
    for n in (3, 5, 9, 17):
        model.head(torch.randn(n, 8))
    assert torch._dynamo.utils.counters["frames"]["ok"] == 1


def test_inductor_region_compiles_and_matches_eager_on_cpu(write_contract) -> None:
    model = Model()
    reference = Model()
    text = (
        CONTRACT.format(extra="")
        .replace('backend = "eager"', 'backend = "inductor"')
        .replace('methods = ["forward", "decode"]', "")
    )
    _, binding, _ = check(write_contract(text), model)
    apply(binding)
    x = torch.randn(4, 8)
    with torch.no_grad():
        assert torch.allclose(model(x), reference(x), atol=1e-5)


def test_torch_nn_builtin_region_really_compiles(write_contract) -> None:
    """`nn.Module.compile()` alone compiles nothing for torch.nn classes; apply must still compile them."""
    model = Model()
    _, binding, _ = check(
        write_contract(
            CONTRACT.format(extra="")
            .replace('module = "head"', 'module = "head.lin"')
            .replace('methods = ["forward", "decode"]', "")
        ),
        model,
    )
    apply(binding)
    torch._dynamo.utils.counters.clear()
    model.head.lin(torch.randn(2, 8))
    assert torch._dynamo.utils.counters["frames"]["ok"] == 1
    assert list(model.state_dict()) == list(Model().state_dict())


def test_a_region_whose_forward_an_offload_hook_replaced_with_a_partial_compiles(write_contract) -> None:
    """accelerate's `add_hook_to_module` sets `module.forward = functools.partial(new_forward, module)`; Dynamo's
    trace rules cannot place a partial, so apply judges the class's forward and still compiles the region."""
    import functools

    model = Model()
    calls = []

    def offloaded_forward(module, x):
        calls.append(1)
        return Layer.forward(module, x)

    model.layers[0].forward = functools.partial(offloaded_forward, model.layers[0])
    _, binding, findings = check(write_contract(CONTRACT.format(extra="")), model)
    assert [f for f in findings if f.severity == "error"] == []
    apply(binding)
    torch._dynamo.utils.counters.clear()
    model.layers[0](torch.randn(2, 8))
    assert calls and torch._dynamo.utils.counters["frames"]["ok"] >= 1


def builtin_region(write_contract, model: Model, extra: str = "") -> Binding:
    """The contract with its head region over `head.lin`, an `nn.Linear` (a torch.nn class Dynamo's rules skip)."""
    text = CONTRACT.format(extra="").replace('module = "head"', f'module = "head.lin"{extra}')
    _, binding, findings = check(write_contract(text.replace('methods = ["forward", "decode"]', "")), model)
    assert not [f for f in findings if f.severity == "error"], findings
    return apply(binding)


def test_a_torch_nn_region_runs_its_own_hooks_eager_around_its_compiled_forward(write_contract) -> None:
    """A torch.nn region's own hooks run eager, as a user class's do under module.compile(): a pre-hook under
    torch.compiler.disable (as FSDP2's are) is no graph break, and the forward between the hooks still compiles."""
    model, reference = Model(), Model()
    calls: list[str] = []
    pre = torch.compiler.disable(lambda module, args: calls.append("pre"))
    for m in (model.head.lin, reference.head.lin):
        m.register_forward_pre_hook(pre)
        m.register_forward_hook(lambda module, args, out: out * 2)
    builtin_region(write_contract, model)
    torch._dynamo.utils.counters.clear()
    x = torch.randn(4, 8)
    assert torch.equal(model.head(x), reference.head(x))
    counters = torch._dynamo.utils.counters
    assert calls == ["pre", "pre"] and counters["frames"]["ok"] == 1 and not counters["graph_break"]


def test_a_torch_nn_region_switched_to_eager_runs_uncompiled_and_can_switch_back(write_contract) -> None:
    """Eager fallback of a torch.nn region compiles nothing; switching back compiles again, dynamic dims included."""
    model = Model()
    binding = builtin_region(write_contract, model, "\ndynamic_dims = { input = [0] }")
    set_eager(binding, "head")
    torch._dynamo.utils.counters.clear()
    model.head(torch.randn(3, 8))
    assert torch._dynamo.utils.counters["frames"]["total"] == 0
    restore(binding, "head")
    for n in (3, 5, 9):
        model.head(torch.randn(n, 8))
    assert torch._dynamo.utils.counters["frames"]["ok"] == 1 and binding.regions["head"].state == "compiled"
