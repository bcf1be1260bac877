"""CC304: what Dynamo refuses to trace, found by what it is rather than by name: a submodule whose forward is under
`torch.compiler.disable` (TransformerEngine's `no_torch_dynamo`), a parent's disabled forward reached by
`super().forward()`, a submodule hook under `torch.compiler.disable` (FSDP2's unshard/reshard hooks), and a C system
call Dynamo's trace rules skip (`os.uname()`, `socket.gethostname()`). `math.sqrt` is traced."""
import math
import os

import torch
from torch import nn


class TELinear(nn.Linear):
    @torch.compiler.disable
    def forward(self, x):
        return super().forward(x)


class ColumnParallel(TELinear):
    def forward(self, x):
        return super().forward(x)  # expect: CC304


@torch.compiler.disable
def unshard(module, args):  # expect: CC304
    return None


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = ColumnParallel(8, 8)
        self.te = TELinear(8, 8)
        self.mlp = nn.Linear(8, 8)
        self.mlp.register_forward_pre_hook(unshard)

    def forward(self, x):
        arch = os.uname().machine  # expect: CC304
        scale = math.sqrt(8)
        y = self.te(self.qkv(x))  # expect: CC304
        return self.mlp(y) / scale if arch else y


def build() -> nn.Module:
    return Block()
