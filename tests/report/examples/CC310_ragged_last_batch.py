"""CC310: the step draws its batches from a DataLoader that keeps a smaller last batch (`drop_last=False` over 10
samples in batches of 4): at every epoch's end the compiled model sees another batch size, a recompile (then a
dynamic graph; a batch of one gets a graph of its own). A loader with `drop_last=True`, or whose batch size divides
its dataset, is not reported."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)


class Loop:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.batches = iter(loader)

    def next_batch(self) -> torch.Tensor:
        try:
            (batch,) = next(self.batches)
        except StopIteration:
            self.batches = iter(self.loader)
            (batch,) = next(self.batches)
        return batch


def build() -> nn.Module:
    model = Model()
    model.train_loop = Loop(DataLoader(TensorDataset(torch.randn(10, 8)), batch_size=4, drop_last=False))
    return model


def step(model, i):
    batch = model.train_loop.next_batch()
    model(batch).sum().backward()  # expect: CC310 warning
