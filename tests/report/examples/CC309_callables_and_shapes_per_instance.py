"""CC309: what differs between the instances of a region compiled layer by layer, beyond their own Python
attributes: the key a patch object in a layer's list of weight functions looks its patch up by (a LoRA applied
lazily, keyed by the weight's name), and the shapes of the layers' buffers (weights packed per quantization type).
Each is one more compile of the shared code."""
import torch
from torch import nn

REGION = "blocks.*"
LOCATION = "blocks.1"
WIDTH = {"q8": 10, "q4": 6}
PATCHES = {f"blocks.{i}.weight": torch.full((8, 8), 0.01 * i) for i in range(4)}


class Patch:
    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + PATCHES[self.key]  # expect: CC309


class Block(nn.Module):
    def __init__(self, i: int, qtype: str) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 8))
        self.register_buffer("packed", torch.zeros(8, WIDTH[qtype]))
        self.weight_function = [Patch(f"blocks.{i}.weight")]

    def forward(self, x):
        weight = self.weight
        for f in self.weight_function:
            weight = f(weight)
        return x @ weight + self.packed.sum()


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(i, "q8" if i % 2 else "q4") for i in range(4))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def build() -> nn.Module:
    return Model()
