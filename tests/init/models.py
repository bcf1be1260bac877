"""Models, steps and factories for the `compile-contract init` tests (real modules, importable by reference)."""

from __future__ import annotations

import torch
from torch import nn

from contract import demo


def _tokens(i: int, length: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(i)
    return torch.randint(0, demo.VOCAB, (2, length), generator=gen)


def late_shape_step(model: nn.Module, i: int) -> torch.Tensor:
    """The demo's step, but from call 5 on the sequence is longer: one recompile after the run settled."""
    with torch.no_grad():
        return model(_tokens(i, 16 if i < 4 else 24))


def early_shape_step(model: nn.Module, i: int) -> torch.Tensor:
    """A new length on call 2 only, then the first one again: a recompile while warming up."""
    with torch.no_grad():
        return model(_tokens(i, 24 if i == 1 else 16))


def raising_step(model: nn.Module, i: int) -> torch.Tensor:
    """Runs once, then fails on its second call (a bug in the user's loop)."""
    if i == 1:
        raise ValueError("batch 1 is missing")
    return demo.step(model, i)


def two_args_step(model: nn.Module) -> torch.Tensor:
    """Wrong signature: a step takes (model, i)."""
    return demo.step(model, 0)


def raising_factory() -> nn.Module:
    """A factory that fails (a missing checkpoint)."""
    raise FileNotFoundError("checkpoint /nonexistent/model.pt")


def not_a_module() -> object:
    """A factory that returns something else than a module."""
    return {"layers": 4}


def meta_hostile() -> nn.Module:
    """A factory that reads a tensor's value while building: it cannot run on the meta device."""
    model = demo.build_model()
    scale = float(model.lm_head.weight.abs().max().item())
    model.scale = scale
    return model


class Stack(nn.Module):
    """Two stacks of blocks side by side (an encoder-decoder's shape): two glob regions with distinct names."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList(demo.Block(demo.DIM, demo.HEADS, 2) for _ in range(2))
        self.decoder = nn.Module()
        self.decoder.layers = nn.ModuleList(demo.Block(demo.DIM, demo.HEADS, 2) for _ in range(3))
        self.proj = nn.Linear(demo.DIM, demo.DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.encoder.layers:
            x = layer(x)
        for layer in self.decoder.layers:
            x = layer(x)
        return self.proj(x)


def build_stack() -> Stack:
    torch.manual_seed(0)
    return Stack().eval()


class Plain(nn.Module):
    """No repeated block, nothing to cut: the whole model is one region."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3, padding=1)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.conv(x))


def build_plain() -> Plain:
    torch.manual_seed(0)
    return Plain().eval()


def plain_step(model: nn.Module, i: int) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(i)))


def build_deep() -> nn.Module:
    """An 80-layer demo decoder (its module tree is what `init` reads; on the meta device no weight is allocated)."""
    return demo.TinyDecoder(layers=80).eval()


def decode_step(model: nn.Module, i: int) -> torch.Tensor:
    """Scenario 2's serving step as `step(model, i)`: prefill 4 tokens, then decode 2 with a growing DynamicCache."""
    from examples.scenario_models import decode

    return decode(model, batch=1, prompt=4, new_tokens=2, seed=i)


def noisy_factory() -> nn.Module:
    """A factory that prints while building (as loaders do): init's stdout must stay the contract alone."""
    print("loading weights ... done")
    return build_plain()


def build_engine_blocks() -> nn.Module:
    """The demo decoder as torchtitan leaves it: each block compiled in place with the engine's own settings."""
    model = demo.build_model()
    for block in model.layers:
        block.compile(backend="eager", fullgraph=True, dynamic=False)
    return model


def build_engine_whole() -> nn.Module:
    """The demo decoder as a trainer hands it over: `torch.compile(model)`, one graph for everything."""
    return torch.compile(demo.build_model(), backend="eager")
