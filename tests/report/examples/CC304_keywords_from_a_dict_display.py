"""CC304: a dict display the step builds and a helper spreads into the compiled call (`model(**inputs)`, as
Trainer.compute_loss does) passes exactly its keys: a parameter it lacks holds its default, so the config's flag
decides the logger branch behind it. A key the helper assigns first (`inputs["use_cache"] = False`) is passed too,
and the branch it closes is not reported."""
import logging
from types import SimpleNamespace

import torch
from torch import nn

logger = logging.getLogger("example.dict_display")
REGION = "*_decoder"


class TrainDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(use_cache=True)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, use_cache=None):
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if use_cache:
            logger.warning("use_cache=True is incompatible with gradient checkpointing")  # expect: CC304
        return self.proj(x)


class EvalDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.config = SimpleNamespace(use_cache=True)
        self.proj = nn.Linear(8, 8)

    def forward(self, x, use_cache=None):
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if use_cache:
            logger.warning("use_cache=True is incompatible with gradient checkpointing")
        return self.proj(x)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.train_decoder = TrainDecoder()
        self.eval_decoder = EvalDecoder()


def build() -> nn.Module:
    return Model()


def compute_loss(model, inputs):
    return model(**inputs)


def compute_eval_loss(model, inputs):
    inputs["use_cache"] = False
    return model(**inputs)


def step(model, i):
    x = torch.randn(2, 8)
    compute_loss(model.train_decoder, {"x": x}).sum().backward()
    with torch.no_grad():
        compute_eval_loss(model.eval_decoder, {"x": x})
