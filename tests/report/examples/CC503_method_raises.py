"""A model whose `generate` is a property that raises when read (the binder must report it, not crash)."""
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    @property
    def generate(self):
        raise RuntimeError("generation config not loaded")


def build() -> Model:
    return Model()
