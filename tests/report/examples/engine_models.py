"""Models an engine compiled before `enforce`, in each of the ways torch lets it (the CC9xx examples bind to them)."""
import torch
from example_models import Net


def whole_model() -> torch.nn.Module:
    """`torch.compile(model)`: one graph for everything, every layer inlined."""
    return torch.compile(Net(), backend="eager")


def blocks_compiled() -> Net:
    """torchtitan's in-place form: `block.compile(backend=..., fullgraph=True)` per block."""
    net = Net()
    for block in net.layers:
        block.compile(backend="eager", fullgraph=True)
    return net


def one_block_skipped() -> Net:
    """The engine compiled every block but the second."""
    net = blocks_compiled()
    net.layers[1]._compiled_call_impl = None
    return net


class Traced:
    """An engine's own callable object around a compiled forward (it does not say what it wraps)."""

    def __init__(self, fn) -> None:
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


def hidden_wrapper() -> Net:
    """A block whose compiled forward sits behind an object that hides torch's compile wrapper."""
    net = Net()
    net.layers[0].forward = Traced(torch.compile(net.layers[0].forward, backend="eager"))
    return net
