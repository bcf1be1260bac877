"""Models and steps the CC4xx (dynamic probe) examples run."""

import torch
from torch import nn

SCALE = 1


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x) * SCALE


class Layer(nn.Module):
    def __init__(self, idx: int) -> None:
        super().__init__()
        self.layer_idx = idx
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x) * (self.layer_idx + 1)


class Stack(nn.Module):
    def __init__(self, n: int = 10) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer(i) for i in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Chatty(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        y = self.proj(x)
        print(end="")
        return y


def scaled() -> nn.Module:
    return Scaled()


def stack() -> nn.Module:
    return Stack()


def short_stack() -> nn.Module:
    return Stack(3)


def chatty() -> nn.Module:
    return Chatty()


def step(model, i):
    with torch.no_grad():
        return model(torch.randn(2, 8))


def step_changing_global(model, i):
    global SCALE
    SCALE = i
    return step(model, i)


def step_adding_hook(model, i):
    if i == 1:
        model.register_forward_hook(lambda mod, args, out: out)
    return step(model, i)


def clip_grad_output(module, grad_output):
    return tuple(g.clamp(-1, 1) for g in grad_output)


def step_clipping_after_warmup(model, i):
    """A trainer that starts clipping gradients with a full backward pre-hook once warm-up is over."""
    if i == 2:
        model.proj.register_full_backward_pre_hook(clip_grad_output)
    model(torch.randn(2, 8, requires_grad=True)).sum().backward()


def step_failing(model, i):
    return model(torch.randn(2, 3))


def step_growing_batch(model, i):
    with torch.no_grad():
        return model(torch.randn(2 + i, 8))


@torch.library.custom_op("probe_example::opaque_scale", mutates_args=())
def opaque_scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


class OpaqueKernel(nn.Module):
    """Calls a custom op that has no fake implementation: eager runs it, Dynamo cannot trace it."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.probe_example.opaque_scale(self.proj(x))


def opaque() -> nn.Module:
    return OpaqueKernel()


class Streaming(nn.Module):
    """A forward that yields one decoded chunk at a time: Dynamo skips frames that yield, silently."""

    def __init__(self) -> None:
        super().__init__()
        self.decode = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor):
        for chunk in x.split(1):
            yield self.decode(chunk)


def streaming() -> nn.Module:
    return Streaming()


def step_streaming(model, i):
    with torch.no_grad():
        return torch.cat(list(model(torch.randn(2, 8))))


class Experts(nn.Module):
    """Two experts, every token through both (an MoE block's own class)."""

    def __init__(self) -> None:
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum(expert(x) for expert in self.experts)


class Block(nn.Module):
    """A dense block, or an MoE block when `sparse` (DeepSeek's dense first layers, then MoE)."""

    def __init__(self, sparse: bool) -> None:
        super().__init__()
        self.sparse = sparse
        self.ffn = Experts() if sparse else nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.ffn(x)


class Mixed(nn.Module):
    def __init__(self, dense: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(sparse=i >= dense) for i in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def mixed() -> nn.Module:
    """One dense layer, then five MoE layers."""
    return Mixed(dense=1, layers=6)


def mixed_twin_dense_only() -> nn.Module:
    """A twin cut at two layers with the model's dense count raised: both layers dense, no MoE block left."""
    return Mixed(dense=2, layers=2)
