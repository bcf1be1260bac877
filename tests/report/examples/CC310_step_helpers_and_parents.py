"""CC310: what the step knows follows its values into the code it calls: a size computed in the step reaches the
compiled layer through the model's own eager forward, a factory annotated to return a record builds one whose int
field the compiled code reads, and a counter the step advances at the end of its body decides a test at its start
on the next call (the location is where the hazard enters the compiled code). A size the step declares dynamic (`torch._dynamo.mark_dynamic`) and a flag read only behind a
switch that is off are not reported."""
import dataclasses

import torch
from torch import nn

TOKENS = [4, 6, 9, 12]


@dataclasses.dataclass
class Meta:
    positions: torch.Tensor
    max_len: int


def make_meta(positions: torch.Tensor, max_len: int) -> Meta:
    return Meta(positions=positions, max_len=max_len)


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.quantize = False
        self.debug = False
        self.verbose_level = 0

    def forward(self, x, meta=None):
        if self.debug:
            x = x * self.verbose_level
        y = self.proj(x)
        if self.quantize:
            y = y.round()
        return y if meta is None else y[: meta.max_len]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = Layer()
        self.steps_run = 0

    def forward(self, x):
        return self.layer(x)  # expect: CC310 warning (the step's size reaches the compiled layer through here)


REGION = "layer"


def build() -> nn.Module:
    return Model()


def step(model, i):
    if model.steps_run == 2:
        model.layer.quantize = True  # expect: CC310 warning (the step's counter turns it on at one call)
    n = TOKENS[i % 4]
    meta = make_meta(torch.arange(n), max_len=n)
    fixed = torch.randn(n, 8)
    torch._dynamo.mark_dynamic(fixed, 0)
    model.layer.verbose_level = i
    with torch.no_grad():
        model.layer(fixed)
        model(torch.randn(n, 8))
        model.layer(fixed, meta)  # expect: CC310 warning (a new Meta every call; the layer reads its max_len)
    model.steps_run += 1
