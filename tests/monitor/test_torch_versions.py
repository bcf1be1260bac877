"""The monitor's adapters where torch versions differ (2.11-2.15): each test passes on every one of them."""

from __future__ import annotations

import torch
from torch import nn
from torch._dynamo import external_utils

from monitor import _dynamo


def test_a_torch_nn_modules_own_compile_is_named_by_its_forward_not_call_impl() -> None:
    # torch 2.14+ compiles `nn.Linear().compile()` as wrap_inline(module._call_impl): name Linear.forward, as for
    # torch.compile(module) (wrap_inline(module)), not Module._call_impl
    lin = nn.Linear(2, 2)
    for fn in (external_utils.wrap_inline(lin._call_impl), external_utils.wrap_inline(lin)):
        name, file, _ = _dynamo.compile_code(None, fn) or ("", "", 0)
        assert (name, file) == ("forward", nn.Linear.forward.__code__.co_filename)


def test_a_torch_nn_modules_own_compile_is_named_forward_where_torch_compiles_it() -> None:
    names: list[str] = []
    stack = _dynamo.DynamoStack()

    def start(args: object) -> None:
        found = _dynamo.compile_code(stack.compile_frame(), stack.compiled_callable())
        names.append(found[0] if found else "")

    def end(args: object) -> None:
        return None

    _dynamo.register(start, end, lambda: None)
    try:
        lin = nn.Linear(2, 2)
        lin.compile(backend="eager")
        lin(torch.ones(1, 2))
    finally:
        _dynamo.unregister(start, end)
        torch._dynamo.reset()
    assert set(names) <= {"forward"}  # 2.11-2.13 compile nothing here (Dynamo skips torch.nn frames)
