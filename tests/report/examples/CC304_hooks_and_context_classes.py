"""CC304: code Dynamo traces around a call as well as in it. A timing context manager class runs its `__enter__`
and `__exit__` inside the compiled forward (`time.perf_counter()` cannot be traced; measured on 2.13, a break in a
`with` block makes Dynamo skip the whole frame, which then runs eager with no break counted); a submodule with a
backward hook (a gradient-reversal layer) breaks the graph where it is called; a hook library that replaced a
block's `forward` on the instance (`module.forward = new_forward`) runs that function instead, and the logger call
both arms of an undecided test make runs either way. A class statement in the forward cannot be traced either (and the frame resumed after it
recompiles on every call: each call builds a new class). A context class that only keeps Python bookkeeping is
traced."""
import logging
import time

import torch
from torch import nn

logger = logging.getLogger("examples.cc304.hooks")
AMP = torch.get_autocast_dtype("cpu") in (torch.float16,)


class timeit:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        self.start = time.perf_counter()  # expect: CC304
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start  # expect: CC304


class scope:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def reverse_gradient(module, grad_output):  # expect: CC304
    return tuple(-0.1 * g for g in grad_output)


def report(x):
    logger.info("attention fallback")  # expect: CC304
    return x


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)


def install_hook(block: nn.Module) -> None:
    original = block.forward

    def new_forward(x):
        if AMP:
            with torch.autocast("cpu"):
                out = report(original(x))
        else:
            out = report(original(x))
        return out

    block.forward = new_forward


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Linear(8, 8)
        self.domain_head = nn.Linear(8, 2)
        self.domain_head.register_full_backward_pre_hook(reverse_gradient)
        self.block = Block()
        install_hook(self.block)

    def forward(self, x):
        class Output(tuple):  # expect: CC304
            pass

        with timeit("forward"), scope("features"):
            h = self.block(self.features(x))
        return Output((self.domain_head(h),))[0]


def build() -> nn.Module:
    return Model()
