"""CC304: breaks reached through library-style code: a logger object's method behind a property that only returns
an attribute (`self.trainer._results.log`, Lightning's result collection under `torch.compiler.disable`), a torch
function Dynamo puts in the graph that returns a Python int (`torch.cuda.device_count()`: "torch.* op returned
non-Tensor"; it is the loop's iterable, evaluated once, not a break inside the loop), and a method of an I/O object
(a marker stream). `torch.cuda.is_available()` is constant-folded and `torch.is_grad_enabled()` has a handler of its
own: neither breaks."""
import io

import torch
from torch import nn


class Results(dict):
    @torch.compiler.disable
    def log(self, name: str, value: torch.Tensor) -> None:
        self[name] = value.detach()


class Trainer:
    def __init__(self) -> None:
        self.results = Results()


class Markers:
    def __init__(self) -> None:
        self.stream = io.StringIO()

    def push(self, name: str) -> None:
        self.stream.write(name + "\n")  # expect: CC304


def devices() -> list[str]:
    names = []
    for i in range(torch.cuda.device_count()):  # expect: CC304
        names.append(f"cuda:{i}")
    return names


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self._trainer = Trainer()
        self.markers = Markers()

    @property
    def trainer(self) -> Trainer:
        assert self._trainer is not None
        return self._trainer

    def forward(self, x):
        self.markers.push("proj")
        y = self.proj(x)
        if not devices() and torch.cuda.is_available() and torch.is_grad_enabled():
            y = y * 2
        self.trainer.results.log("y", y)  # expect: CC304
        return y


def build() -> nn.Module:
    return Model()
