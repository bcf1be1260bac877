"""CC310: objects the step builds drive the model through their methods: a trainer built around the model (or
fetched from a cache that built it) switches it between train and eval, and the compiled code reads `training`. No
user code runs to know it: the scan keeps what the object's `__init__` stores from its arguments. A logger object
the step builds that only keeps its own counter is not reported."""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        h = self.encoder(x)
        if self.training:
            h = self.dropout(h)
        return h


class Trainer:
    def __init__(self, model: nn.Module, eval_every: int = 2) -> None:
        self.model = model
        self.eval_every = eval_every

    def train_step(self) -> None:
        self.model.train()  # expect: CC310 (train and eval alternate: `training` is a new value at every other call)
        self.model(torch.randn(4, 8)).sum().backward()  # expect: CC310 warning (with grad; under no_grad in evaluate)

    def evaluate(self) -> None:
        self.model.eval()
        with torch.no_grad():
            self.model(torch.randn(4, 8))


class Meter:
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    def update(self) -> None:
        self.count += 1


_TRAINERS: dict[int, Trainer] = {}


def build() -> nn.Module:
    return Classifier()


def step(model, i):
    trainer = _TRAINERS.get(id(model))
    if trainer is None:
        trainer = _TRAINERS[id(model)] = Trainer(model)
    trainer.train_step()
    meter = Meter("loss")
    meter.update()
    if i % trainer.eval_every == 0:
        trainer.evaluate()
