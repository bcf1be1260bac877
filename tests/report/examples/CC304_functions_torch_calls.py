"""CC304 in functions torch calls for the compiled code: the function given to `checkpoint` runs inside the
compiled call (its `print` breaks the graph), and a local function decorated with `torch.compiler.disable` is a
graph break at every call by design. Functions that only get registered are not walked."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.verbose = True

    def _inner(self, x):
        h = torch.relu(self.fc(x))
        if self.verbose:
            print("activation", h.shape)  # expect: CC304 warning
        return h

    def forward(self, x):
        @torch.compiler.disable
        def clamp(t):
            return t.clamp(-10.0, 10.0)

        y = checkpoint(self._inner, x, use_reentrant=False)
        return clamp(y)  # expect: CC304 warning


def build() -> nn.Module:
    return Block()
