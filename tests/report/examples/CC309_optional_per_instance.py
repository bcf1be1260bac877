"""CC309: blocks compiled one by one where every other block has a sliding window and the rest hold None (GPT-OSS,
Gemma-style alternating attention): `is not None` on a per-instance attribute is one graph per kind of block. An
attribute every block holds as None is not reported."""
import torch
from torch import nn

REGION = "layers.*"


class Block(nn.Module):
    def __init__(self, window: int | None) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.sliding_window = window
        self.rope_scaling = None

    def forward(self, x):
        pos = torch.arange(x.shape[0])
        mask = pos[None, :] <= pos[:, None]
        if self.sliding_window is not None:  # expect: CC309 warning
            mask = mask & (pos[:, None] - pos[None, :] < self.sliding_window)  # expect: CC309 warning
        if self.rope_scaling is not None:
            x = x * 2
        return self.proj(mask.float() @ x)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(4 if i % 2 == 0 else None) for i in range(4))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    return Model()
