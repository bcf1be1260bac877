"""CC310: more of what the step hands the compiled code: an item of a list of numbers or strings picked by `i`, a
changing string inside a dict it builds, an argument that is None at some calls only, an input it makes require grad
at some calls, and a tensor sized by a helper it calls. An argument the compiled code never reads (Lightning's
`batch_idx`) and a size that stays fixed are not reported."""
import torch
from torch import nn

SCALES = [1.0, 1.5, 2.5, 7.5]
TASKS = ["pick", "place", "push", "open"]


class Denoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, guidance, batch, top_k=None, batch_idx=0):
        y = self.proj(x) * guidance
        if batch["task"] == "push":
            y = -y
        if top_k is not None:
            y = y + top_k
        return y + batch["state"]


def sized(rows: int, cols: int) -> torch.Tensor:
    noise = torch.randn(rows, cols)
    return noise.view(rows, cols)


def build() -> nn.Module:
    return Denoiser()


def step(model, i):
    guidance = SCALES[i % 4]
    batch = {"task": TASKS[i % 4], "state": torch.zeros(8)}  # expect: CC310 warning (a changing string in the dict)
    top_k = None if i % 2 else torch.ones(8)
    x = sized(2 + i % 3, 8)
    real = torch.randn(2, 8)
    if i % 4 == 0:
        real.requires_grad_(True)
    model(real, 1.0, batch, batch_idx=i)  # expect: CC310 warning (inputs requiring grad at some calls only)
    with torch.no_grad():
        return model(
            x,  # expect: CC310 warning (its size follows `i` through `sized`)
            guidance,  # expect: CC310 warning (an item of a list of numbers picked by `i`)
            batch,
            top_k,  # expect: CC310 warning (None at some calls only)
            batch_idx=i,
        )
