"""CC304: a training step compiled whole calls `backward()`, freezes a submodule with `requires_grad_(False)` and
turns on `requires_grad_()` for a gradient penalty: Dynamo traces none of them."""
from torch import nn


class Trainer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.frozen = nn.Linear(8, 8)

    def forward(self, x):
        self.frozen.requires_grad_(False)  # expect: CC304
        x = x.requires_grad_()  # expect: CC304
        loss = self.proj(self.frozen(x)).pow(2).mean()
        loss.backward()  # expect: CC304
        return loss.detach()


def build() -> nn.Module:
    return Trainer()
